package hostserver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"mcpx/internal/catalog"
	"mcpx/internal/hostsurface"
)

// The policy decisions a method or meta-tool may have.
const (
	policyNone       = "none: lifecycle"
	policySession    = "none: the host's own session (its requests, its log level)"
	policyTools      = "tool filter"
	policyServers    = "server visibility (hostFilter.usesServer)"
	policyJobs       = "job policy: principal.Policy.Decide, ReadJob and CancelJob (hostjobs.Asking, made by request.asking)"
	policyToolsNames = "tool filter; instructions and mcpx_exec's description: server visibility"
	// A call or script that may become a job or task asks StartJob once,
	// in becomeCandidate (a 2026-07-28 task: modernTaskCall).
	policyToolsJobs = policyTools + "; a job or task: principal.Policy.Decide, StartJob (becomeCandidate)"
)

// methodPolicies is every MCP method mcpx answers or takes from a host,
// with what decides what the host may do with it. TestMethodPolicies
// fails for a method dispatch serves that is not here.
var methodPolicies = map[string]string{
	"initialize":                policyServers, // its instructions name the servers the host may use
	"server/discover":           policyServers, // likewise
	"ping":                      policyNone,
	"notifications/initialized": policyNone,
	"notifications/cancelled":   policySession, // a request of its own session only
	"logging/setLevel":          policySession, // the messages it admits: server visibility (deliverLog)
	"tools/list":                policyToolsNames,
	"tools/call":                policyToolsJobs, // the meta-tools: metaToolPolicies
	"tasks/get":                 policyJobs,
	"tasks/result":              policyJobs,
	"tasks/list":                policyJobs,
	"tasks/cancel":              policyJobs,
	"tasks/update":              policyJobs,
	"subscriptions/listen":      policyServers, // its resource subscriptions
	"resources/list":            policyServers,
	"resources/templates/list":  policyServers,
	"resources/read":            policyServers,
	"resources/subscribe":       policyServers,
	"resources/unsubscribe":     policyServers,
	"prompts/list":              policyServers,
	"prompts/get":               policyServers,
	"completion/complete":       policyServers,
}

// metaToolPolicies is every meta-tool of mcpx's, with what decides what
// the host may do with it.
var metaToolPolicies = map[string]string{
	"mcpx_search":     policyTools,
	"mcpx_call":       policyToolsJobs,
	"mcpx_describe":   policyTools,
	"mcpx_exec":       policyToolsNames + "; " + policyToolsJobs, // tools.*, mcpx.call, mcpx.search: Script.Allow
	"mcpx_job":        policyJobs,
	"mcpx_job_cancel": policyJobs,
}

// TestMethodPolicies: every method dispatch answers (the cases of its
// switches on a host message's method, the surface's methods of package
// hostsurface, the methods a 2026-07-28 HTTP host may POST) and every
// meta-tool has a policy decision, and every decision names a method or
// tool that is still served.
func TestMethodPolicies(t *testing.T) {
	served := map[string]bool{}
	for _, m := range dispatchedMethods(t) {
		served[m] = true
	}
	for _, m := range hostsurface.Methods() {
		served[m] = true
	}
	for m := range modernMethods {
		served[m] = true
	}
	for _, m := range slices.Sorted(maps.Keys(served)) {
		if methodPolicies[m] == "" {
			t.Errorf("mcpx answers %s, which has no policy decision in methodPolicies: say what of the host's filter and principal applies to it", m)
		}
	}
	for m := range methodPolicies {
		if !served[m] {
			t.Errorf("methodPolicies names %s, which mcpx no longer answers", m)
		}
	}
	for name := range catalog.Reserved {
		if metaToolPolicies[name] == "" {
			t.Errorf("meta-tool %s has no policy decision in metaToolPolicies", name)
		}
	}
	for name := range metaToolPolicies {
		if !catalog.Reserved[name] {
			t.Errorf("metaToolPolicies names %s, which is no meta-tool of mcpx's", name)
		}
	}
}

// dispatchedMethods returns the methods named by the cases of every
// switch on a message's Method in dispatch.go, their constants resolved
// from this package's and internal/mcp's declarations.
func dispatchedMethods(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	consts := map[string]string{} // "mcp.MethodPing" or "mcp.MethodTasksGet" -> value
	for _, dir := range []struct{ glob, qual string }{{"*.go", ""}, {"../mcp/*.go", "mcp."}} {
		files, err := filepath.Glob(dir.glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if vs, ok := n.(*ast.ValueSpec); ok {
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[dir.qual+id.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
				return true
			})
		}
	}
	f, err := parser.ParseFile(fset, "dispatch.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok {
			return true
		}
		if sel, ok := sw.Tag.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Method" {
			return true
		}
		for _, stmt := range sw.Body.List {
			for _, e := range stmt.(*ast.CaseClause).List {
				var v string
				switch e := e.(type) {
				case *ast.BasicLit:
					v, _ = strconv.Unquote(e.Value)
				case *ast.Ident:
					v = consts[e.Name]
				case *ast.SelectorExpr:
					if x, ok := e.X.(*ast.Ident); ok {
						v = consts[x.Name+"."+e.Sel.Name]
					}
				}
				if v == "" {
					t.Fatalf("dispatch.go: a case of a switch on the method, %s, names no string constant this test can read", fset.Position(e.Pos()))
				}
				out = append(out, v)
			}
		}
		return true
	})
	if len(out) < 10 {
		t.Fatalf("found only %d methods in dispatch.go's switches: %v", len(out), out)
	}
	return out
}
