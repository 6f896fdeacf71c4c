package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
)

// dep is a heavy dependency: the packages whose paths start with one of
// its prefixes.
type dep struct {
	name     string
	prefixes []string
}

// deps are the dependencies the table names, in its order.
var deps = []dep{
	{"OpenTelemetry's OTLP exporters, gRPC", []string{"go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/proto/", "google.golang.org/grpc", "google.golang.org/genproto/", "github.com/grpc-ecosystem/"}},
	{"OpenTelemetry SDK and API, with mcpx's exporter (internal/tracing)", []string{"go.opentelemetry.io/", "mcpx/internal/tracing"}},
	{"esbuild", []string{"github.com/evanw/esbuild/"}},
	{"goja (with github.com/google/pprof)", []string{"github.com/dop251/goja"}},
	{"SQLite port (modernc.org/sqlite, its libc)", []string{"modernc.org/"}},
	{"pgx", []string{"github.com/jackc/"}},
	{"Prometheus client", []string{"github.com/prometheus/"}},
}

func (d dep) has(pkg string) bool {
	for _, p := range d.prefixes {
		if strings.HasPrefix(pkg, p) || pkg == strings.TrimSuffix(p, "/") {
			return true
		}
	}
	return false
}

// graph is the import graph of the command.
type graph struct {
	root    string
	imports map[string][]string
}

func loadGraph(pattern string) (*graph, error) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %w", pattern, err)
	}
	g := &graph{imports: map[string][]string{}}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		g.imports[p.ImportPath] = p.Imports
		g.root = p.ImportPath // -deps lists the command last
	}
	return g, nil
}

// without returns the packages the root still links when no package
// matching skip is linked.
func (g *graph) without(skip func(string) bool) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] || skip(p) {
			return
		}
		seen[p] = true
		for _, q := range g.imports[p] {
			walk(q)
		}
	}
	walk(g.root)
	return seen
}

// only returns the packages that leave the binary with those matching
// skip.
func (g *graph) only(skip func(string) bool) map[string]bool {
	left := g.without(skip)
	gone := map[string]bool{}
	for p := range g.without(func(string) bool { return false }) {
		if !left[p] {
			gone[p] = true
		}
	}
	return gone
}

// importers returns the packages that import pkg, sorted.
func (g *graph) importers(pkg string) []string {
	var r []string
	for p, imps := range g.imports {
		for _, q := range imps {
			if q == pkg {
				r = append(r, p)
			}
		}
	}
	sort.Strings(r)
	return r
}
