package mcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
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

// wireValue finds a result type or a task status written as a member's
// value in JSON text: "resultType":"complete", "status": "working".
var wireValue = regexp.MustCompile(`"(?:resultType|status)"\s*:\s*"([^"\\]*)"`)

// findings lists what in one string literal names the protocol where a
// constant of this package should: names holds the method names, _meta
// keys and extension names, values the result types and task statuses,
// each to the constant(s) that spell it.
//
//   - A literal that is a name, or JSON text holding one as a quoted token
//     (`{"method":"tools/list"}`, `"progressToken"`).
//   - JSON text writing a value as the resultType or status member, or a
//     literal that is a value as one JSON token (`"complete"`, compared to
//     or set as raw JSON). "task" is left to the member form: as a token it
//     is as often the params member asking for a task.
//
// Prose and log text that use a value as a word ("failed", "cancelled")
// are not findings: those words are also mcpx's own outcomes and job
// statuses, which are not the protocol's.
func findings(lit string, names, values map[string]string) []string {
	var out []string
	if c := names[lit]; c != "" {
		out = append(out, c)
	}
	if strings.Contains(lit, `"`) {
		for name, c := range names {
			if strings.Contains(lit, `"`+name+`"`) {
				out = append(out, c)
			}
		}
		for _, m := range wireValue.FindAllStringSubmatch(lit, -1) {
			if c := values[m[1]]; c != "" {
				out = append(out, c)
			}
		}
		if v, ok := strings.CutPrefix(lit, `"`); ok && v != mcp.ResultTypeTask+`"` {
			if c := values[strings.TrimSuffix(v, `"`)]; c != "" && strings.HasSuffix(v, `"`) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// resultTypeField returns the literal n sets or compares a struct field
// named ResultType, or a map's "resultType" member, to: it is the
// protocol's result type.
func resultTypeField(n ast.Node) *ast.BasicLit {
	named := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.BasicLit:
			return e.Value == `"resultType"`
		case *ast.Ident:
			return e.Name == "ResultType"
		case *ast.SelectorExpr:
			return e.Sel.Name == "ResultType"
		}
		return false
	}
	lit := func(e ast.Expr) *ast.BasicLit {
		if l, ok := e.(*ast.BasicLit); ok && l.Kind == token.STRING {
			return l
		}
		return nil
	}
	switch n := n.(type) {
	case *ast.KeyValueExpr:
		if named(n.Key) {
			return lit(n.Value)
		}
	case *ast.BinaryExpr:
		if named(n.X) {
			return lit(n.Y)
		}
		if named(n.Y) {
			return lit(n.X)
		}
	case *ast.AssignStmt:
		for i, l := range n.Lhs {
			if i < len(n.Rhs) && named(l) {
				return lit(n.Rhs[i])
			}
		}
	}
	return nil
}

func TestFindings(t *testing.T) {
	names := map[string]string{mcp.MethodToolsList: "mcp.MethodToolsList", mcp.MetaProgressToken: "mcp.MetaProgressToken"}
	values := map[string]string{mcp.ResultTypeComplete: "mcp.ResultTypeComplete", mcp.ResultTypeTask: "mcp.ResultTypeTask", mcp.TaskWorking: "mcp.TaskWorking"}
	for lit, want := range map[string]int{
		"tools/list": 1,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`: 1,
		`{"_meta":{"progressToken":7}}`:                  1,
		`{"resultType":"complete"}`:                      1,
		`{"resultType": "task", "status":"working"}`:     2,
		`"complete"`:                     1,
		`"task"`:                         0, // also the params member
		`"failed"`:                       0, // not a value here
		"the call is complete":           0,
		"tools/list answered":            0,
		`the status "working" is logged`: 0,
		`{"status":"running"}`:           0,
	} {
		if got := findings(lit, names, values); len(got) != want {
			t.Errorf("findings(%q) = %v, want %d", lit, got, want)
		}
	}
}

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
