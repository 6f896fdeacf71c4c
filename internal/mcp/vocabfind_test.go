package mcp_test

import (
	"go/ast"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/mcp"
)

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
		if len(lit) > 2 && lit[0] == '"' && lit[len(lit)-1] == '"' && lit[1:len(lit)-1] != mcp.ResultTypeTask {
			if c := values[lit[1:len(lit)-1]]; c != "" {
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
