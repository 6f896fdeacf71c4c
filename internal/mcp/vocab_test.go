package mcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mcpx/internal/mcp"
)

// vocabulary returns the value of every constant this package declares
// whose name starts with one of prefixes, read from its source.
func vocabulary(t *testing.T, prefixes ...string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(id.Name, p) }) {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if known[v] != "" {
						known[v] += " or "
					}
					known[v] += "mcp." + id.Name
				}
			}
		}
	}
	return known
}

// Test support, the benchmarks' load generators (both drive mcpx as an
// outside host would) and the conformance fixture (which grades mcpx on
// the go-sdk alone) may spell the protocol themselves.
var vocabExempt = []string{"internal/mcp", "internal/mcpxtest", "internal/e2e/harness", "internal/conformfixture", "internal/store/storetest", "bench"}

// TestVocabularyHasOneHome: no production file outside this package spells
// a method name, a _meta key, an extension name, a result type or a task
// status the protocol carries (see findings); it names the constant, and
// builds JSON text from it.
func TestVocabularyHasOneHome(t *testing.T) {
	names := vocabulary(t, "Method", "Meta", "Extension")
	values := vocabulary(t, "ResultType", "Task")
	resultTypes := vocabulary(t, "ResultType")
	for _, want := range []string{mcp.MethodToolsCall, mcp.MethodTasksGet, mcp.MetaRelatedTask, mcp.ExtensionTasks} {
		if names[want] == "" {
			t.Fatalf("the vocabulary read from the source lacks %q: %v", want, names)
		}
	}
	for _, want := range []string{mcp.ResultTypeComplete, mcp.ResultTypeInputRequired, mcp.TaskWorking, mcp.TaskCancelled} {
		if values[want] == "" {
			t.Fatalf("the vocabulary read from the source lacks %q: %v", want, values)
		}
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." || slices.Contains(vocabExempt, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			if lit := resultTypeField(n); lit != nil {
				if v, err := strconv.Unquote(lit.Value); err == nil && resultTypes[v] != "" {
					t.Errorf("%s: the result type %s: use %s", fset.Position(lit.Pos()), lit.Value, resultTypes[v])
				}
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, c := range findings(v, names, values) {
				t.Errorf("%s: the literal %s: use %s", fset.Position(lit.Pos()), lit.Value, c)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned %d files from %s: is the test run from internal/mcp?", scanned, root)
	}
}
