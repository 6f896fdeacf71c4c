package internal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layering of docs/architecture.md ("Layers"), checked
// on the non-test imports of every package in the module. Packages are
// named relative to mcpx/internal/; "cmd/mcpx" is the binary and
// "integrations/..." the integrations beside internal/.

const module = "mcpx"

// rule constrains what one package may depend on, directly or through
// other packages.
type rule struct {
	pkg string
	why string
	// stdOnly: nothing but the standard library.
	stdOnly bool
	// allowed, if non-nil: the only mcpx packages it may depend on.
	allowed []string
	// never: mcpx packages it must not depend on.
	never []string
}

var roots = []string{"daemon", "cli", "localclient"}

var rules = []rule{
	{pkg: "jsonrpc", stdOnly: true, why: "jsonrpc is a leaf: the standard library only, and no MCP"},
	{pkg: "apitype", stdOnly: true, why: "apitype is a leaf: the standard library only"},
	{pkg: "config", stdOnly: true, why: "config is a leaf: the standard library only"},
	{pkg: "sock", stdOnly: true, why: "sock is a leaf: the standard library only"},
	{pkg: "sse", stdOnly: true, why: "sse (server-sent events, both directions) is a leaf: the standard library only"},
	{pkg: "authn", stdOnly: true, why: "authn (checking the access tokens people present, as an OAuth resource server) is a leaf: the standard library only, no policy and no request"},
	{pkg: "hostprofile", stdOnly: true, why: "hostprofile is a leaf: the standard library only"},
	{pkg: "promtext", stdOnly: true, why: "promtext (metrics in Prometheus's text format) is a leaf: the standard library only"},
	{pkg: "seal", stdOnly: true, why: "seal, the one AES-GCM sealer of bridge and oauth, is a leaf: the standard library only"},
	{pkg: "outq", stdOnly: true, why: "outq, the ordered writer of hosts and upstreams alike, is a leaf: the standard library only"},
	{pkg: "principal", allowed: []string{"config"}, why: "principal (who a request acts for, and the one policy that decides what it may do) is a leaf: the config's tool filters and nothing else of mcpx, so every face and the core can use it"},
	{pkg: "hostconfig", allowed: []string{}, why: "hostconfig reads and edits hosts' config files: nothing of mcpx, so the CLI may use it"},
	{pkg: "mcp", allowed: []string{"jsonrpc"}, why: "mcp is the protocol layer: it builds on jsonrpc alone"},
	{pkg: "demo", allowed: []string{"jsonrpc", "mcp", "sse"}, why: "demo is a fixture server: it builds on jsonrpc, mcp and sse alone"},
	{pkg: "conformfixture", allowed: []string{}, why: "conformfixture is the conformance suite's fixture server, on the go-sdk alone: nothing of mcpx grades mcpx"},
	{
		pkg:     "supervise",
		allowed: []string{"config"},
		why:     "supervise runs child processes: it knows nothing of MCP and builds on config alone",
	},
	{
		pkg:   "upstream",
		never: slices.Concat([]string{"relay", "catalog", "hostserver", "localapi", "jobs"}, roots),
		why:   "upstream is an engine: it never imports the core, the edges or the roots",
	},
	{
		pkg:     "sandbox",
		allowed: []string{"supervise", "config"},
		why:     "sandbox is an engine that knows nothing of MCP: its child runs under supervise (which builds on config), nothing else of mcpx (and never store)",
	},
	{
		pkg:   "codemode",
		never: slices.Concat([]string{"hostserver", "localapi", "store", "jobs"}, roots),
		why:   "codemode is the core of scripts: relay and sandbox, never the edges, the store or the roots",
	},
	{pkg: "oauth", allowed: []string{"config", "seal", "mcp", "jsonrpc"}, why: "oauth is an engine (mcpx as an OAuth client of upstreams): it knows the config, the sealer and the protocol layer (its unsigned probe is a ping), and nothing of the core, the edges or the roots"},
	{pkg: "relay", never: slices.Concat([]string{"hostserver", "localapi", "oauth", "bridge", "jobs"}, roots), why: "relay is the core: it never imports the edges or the roots, nor oauth (an upstream's need of a sign-in reaches it as upstream.SignInNeeded), nor the bridges that wrap its calls (they plug in as a relay.Bridge), nor jobs"},
	{
		pkg:   "bridge",
		never: slices.Concat([]string{"hostserver", "localapi", "oauth", "jobs", "codemode", "catalog", "store"}, roots),
		why:   "bridge carries the relay's calls across protocol revisions: it builds on relay and what relay builds on, never on the edges, the roots, jobs, code mode or the store, nor oauth (sign-ins reach it through its interfaces)",
	},
	{pkg: "catalog", never: slices.Concat([]string{"hostserver", "localapi"}, roots), why: "catalog is the core: it never imports the edges or the roots"},
	{pkg: "hostserver", never: slices.Concat([]string{"localapi"}, roots), why: "hostserver is an edge: it never imports the other edge or the roots"},
	{
		pkg:     "hosthttp",
		allowed: []string{"principal", "config", "sock", "authn", "jsonrpc", "mcp", "outq", "sse"},
		why:     "hosthttp, the Streamable HTTP transport toward hosts (who may use a listener, the wire, the sessions' POSTs, GET streams and response streams), knows HTTP, the principals and the wire: it sees the host sessions through its Sessions interface and never imports them (hostserver builds on it, not the other way), nor the core, the other edge or the roots",
	},
	{
		pkg:     "hoststream",
		allowed: []string{"apitype", "jsonrpc", "mcp", "sock"},
		why:     "hoststream, the host's stdio link on both sides, builds on the wire types and the protocol alone: serve reaches the daemon through interfaces, the daemon serves the host through a function",
	},
	{
		pkg:   "hostjobs",
		never: slices.Concat([]string{"hostserver", "hosthttp", "hoststream", "localapi", "ui"}, roots),
		why:   "hostjobs, what hosts are told of jobs and tasks, the tasks' questions and a call's link to the job it becomes, builds on the jobs, the core and the wire: it sees a host's request and session only through its Host interface and never their transports (hostserver builds on it, not the other way), the other edges or the roots",
	},
	{
		pkg:   "hostsurface",
		never: slices.Concat([]string{"hostserver", "hosthttp", "hoststream", "hostjobs", "localapi", "jobs", "store", "ui"}, roots),
		why:   "hostsurface, the upstreams' resources, prompts, completions, subscriptions, logging and list changes as hosts get them, builds on the core and the wire: it sees a host session and its request through its Host and Request interfaces and never imports them (hostserver builds on it, not the other way), nor their transports, the jobs, the other edge or the roots",
	},
	{pkg: "localapi", never: slices.Concat([]string{"hostserver"}, roots), why: "localapi is an edge: it never imports the other edge or the roots"},
	{
		pkg:   "tracing",
		never: slices.Concat([]string{"hostserver", "localapi", "ui"}, roots),
		why:   "tracing makes spans for the relay: it never imports the edges or the roots",
	},
	{
		pkg:   "ui",
		never: slices.Concat([]string{"hostserver", "localapi", "store", "jobs"}, roots),
		why:   "ui observes: it reads status and acts through what the daemon hands it (the CLI's own operations), never the other edges, the roots, or the jobs and their store (it hears of jobs through jobs.Observer, statuses as strings)",
	},
	{
		pkg:   "cli",
		never: []string{"daemon", "localapi", "relay", "catalog", "upstream", "hostserver", "jobs"},
		why:   "the CLI meets the daemon only through apitype over the socket",
	},
	{
		pkg:   "localclient",
		never: []string{"daemon", "localapi", "relay", "catalog", "upstream", "hostserver", "jobs"},
		why:   "the local client meets the daemon only through apitype over the socket",
	},
	{
		pkg:     "hosttoken",
		allowed: []string{"config", "store"},
		why:     "hosttoken, the hosts' named tokens and their file and store backends, builds on config and store alone: every face and the CLI may use it",
	},
	{
		pkg:     "store",
		allowed: []string{},
		why:     "store is an engine that knows nothing of MCP: it imports nothing of mcpx",
	},
	{pkg: "audit", allowed: []string{"principal", "config"}, why: "audit is an engine the core records in: its records, queue and file sink know the principals and nothing of MCP, the core, the edges or the store"},
	{pkg: "audit/auditstore", allowed: []string{"audit", "principal", "config", "store"}, why: "auditstore keeps the audit log in the store's table: audit and store alone, so that the core never reaches the store through audit"},
	{pkg: "jobs", never: slices.Concat([]string{"hostserver", "localapi"}, roots), why: "jobs is the core: it builds on relay and store, never on the edges or the roots"},
	{
		pkg:     "integrations/opencode",
		allowed: []string{},
		why:     "the opencode plugin reaches mcpx only through /v1 at run time: its Go package, which carries and installs it, imports nothing of mcpx",
	},
}

// importedOnlyBy: each key may be imported (directly) only by the listed
// packages and by the test support package mcpxtest, which may import
// anything.
var importedOnlyBy = map[string][]string{
	"daemon":                {"cmd/mcpx"},
	"cli":                   {"cmd/mcpx"},
	"integrations/opencode": {"cli"}, // mcpx install opencode --plugin
	// The host-side transport: the host sessions serve over it, the daemon
	// mounts it on its listeners and guards them with its checks; the
	// core never sees it.
	"hosthttp": {"hostserver", "daemon"},
	// What hosts are told of jobs and tasks: the host sessions' alone.
	"hostjobs": {"hostserver"},
	// The surface beyond tools: the host sessions' alone.
	"hostsurface": {"hostserver"},
}

// neverDirect: the import paths (and their subpackages) each key must
// not import itself, though it may reach them through the packages made
// for that.
var neverDirect = map[string][]string{
	// The CLI reaches the job store only through the daemon (the
	// functions cmd/mcpx hands it in Env) or hosttoken (the named
	// tokens): it never opens it, nor a database, itself.
	"cli": {"mcpx/internal/store", "mcpx/internal/audit/auditstore", "database/sql", "github.com/jackc/pgx/v5", "modernc.org/sqlite"},
}

// testOnly packages are imported from _test.go files only, and by one
// another (the end-to-end harness builds on mcpxtest).
var testOnly = []string{"mcpxtest", "store/storetest", "jobs/jobstest", "e2e/harness", "ptytest"}

// listed is one package as go list -json describes it.
type listed struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// goList returns every package of the module and its dependencies, with
// their non-test imports.
func goList(t *testing.T) map[string]*listed {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("finding the go command: %v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "list", "-e", "-deps", "-json=ImportPath,Imports,Standard", "./...")
	cmd.Dir = filepath.Dir(wd) // the module root: this file is in internal/
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs[p.ImportPath] = &p
	}
	if pkgs[module+"/cmd/mcpx"] == nil {
		t.Fatalf("go list found no %s/cmd/mcpx; is it run from the module root?", module)
	}
	return pkgs
}

// full returns the import path of a package named in the rules.
func full(name string) string {
	if name == "cmd/mcpx" || strings.HasPrefix(name, "integrations/") {
		return module + "/" + name
	}
	return module + "/internal/" + name
}

// short is the inverse of full for packages of the module.
func short(path string) string {
	if s, ok := strings.CutPrefix(path, module+"/internal/"); ok {
		return s
	}
	if s, ok := strings.CutPrefix(path, module+"/"); ok {
		return s
	}
	return path
}

func inModule(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// chain returns the shortest import chain from one package to another, or
// nil if from does not depend on to.
func chain(pkgs map[string]*listed, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for p := cur; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return path
		}
		if pkgs[cur] == nil {
			continue
		}
		for _, imp := range pkgs[cur].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// deps returns every package from depends on, sorted.
func deps(pkgs map[string]*listed, from string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if pkgs[p] == nil {
			return
		}
		for _, imp := range pkgs[p].Imports {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(from)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// via returns the import chain from one package to another, as
// " (via a -> b -> c)", or "" for a direct import.
func via(pkgs map[string]*listed, from, to string) string {
	c := chain(pkgs, from, to)
	if len(c) <= 2 {
		return ""
	}
	names := make([]string, len(c))
	for i, p := range c {
		names[i] = short(p)
	}
	return fmt.Sprintf(" (via %s)", strings.Join(names, " -> "))
}

func TestDeps(t *testing.T) {
	pkgs := goList(t)
	for _, r := range rules {
		p := full(r.pkg)
		if pkgs[p] == nil {
			continue // TestDepsRulesNameRealPackages says so
		}
		var bad []string
		for _, d := range deps(pkgs, p) {
			dp := pkgs[d]
			if r.stdOnly && d != "C" && (dp == nil || !dp.Standard) || // C: cgo, as net uses it
				r.allowed != nil && inModule(d) && !slices.Contains(r.allowed, short(d)) ||
				inModule(d) && slices.Contains(r.never, short(d)) {
				bad = append(bad, "\n\t"+d+via(pkgs, p, d))
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s imports what it must not (%s):%s", p, r.why, strings.Join(bad, ""))
		}
	}

	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		if !inModule(path) {
			continue
		}
		pkg, name := pkgs[path], short(path)
		for _, imp := range pkg.Imports {
			target := short(imp)
			if allowed, ok := importedOnlyBy[target]; ok && inModule(imp) &&
				!slices.Contains(allowed, name) && !slices.Contains(testOnly, name) {
				t.Errorf("%s imports %s: only %s may import it (and test support: %s)",
					path, imp, strings.Join(allowed, ", "), strings.Join(testOnly, ", "))
			}
			for _, never := range neverDirect[name] {
				if imp == never || strings.HasPrefix(imp, never+"/") {
					t.Errorf("%s imports %s itself: it reaches it only through the packages made for that (neverDirect)", path, imp)
				}
			}
			if inModule(imp) && slices.Contains(testOnly, target) && !slices.Contains(testOnly, name) {
				t.Errorf("%s imports %s: %s is test support, imported only from _test.go files", path, imp, target)
			}
		}
	}
}

// TestDepsRulesNameRealPackages: every package the rules name exists, so
// that no rule guards a package that is gone (or was renamed) while
// reading as if it held.
func TestDepsRulesNameRealPackages(t *testing.T) {
	pkgs := goList(t)
	named := slices.Concat(roots, testOnly)
	for _, r := range rules {
		named = slices.Concat(named, []string{r.pkg}, r.allowed, r.never)
	}
	for pkg, by := range importedOnlyBy {
		named = slices.Concat(named, []string{pkg}, by)
	}
	for pkg, never := range neverDirect {
		named = append(named, pkg)
		for _, n := range never {
			if pkgs[n] == nil {
				t.Errorf("deps_test.go's neverDirect names %s, which is no package the module builds with", n)
			}
		}
	}
	slices.Sort(named)
	for _, name := range slices.Compact(named) {
		if pkgs[full(name)] == nil {
			t.Errorf("deps_test.go names %s, which is not a package of the module: if it was renamed, update the rules", name)
		}
	}
}
