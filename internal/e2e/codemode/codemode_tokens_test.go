package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestCodeModeTokens measures, for one task against server-everything, the
// tokens a model sees doing it with direct tool calls and with one script
// (it checks only that both reach the same answer; the numbers go to the
// log, and to README.md). The task: the weather of New York, Chicago and
// Los Angeles, the warmest of them and the sum of the three temperatures
// (with the get-sum tool, two numbers at a time).
//
// Tokens are approximated as ceil(characters / 4) of the JSON a model
// reads or writes: the tool definitions from tools/list, each call's name
// and arguments, and each result's text content. Two totals: "once" counts
// everything once; "re-read" assumes one model turn per tool call, each
// turn reading the whole conversation so far (tool definitions included),
// plus a final turn to answer.
func TestCodeModeTokens(t *testing.T) {
	t.Parallel()
	node, _ := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	server := mcpxtest.Demo{Name: "everything", Fields: map[string]any{"command": node, "args": []string{everything}}}
	cities := []string{"New York", "Chicago", "Los Angeles"}
	tokens := func(s string) int { return (len(s) + 3) / 4 }

	type turn struct{ wrote, read string }
	measure := func(defs string, turns []turn) (once, reread int) {
		once = tokens(defs)
		context := tokens(defs)
		for _, tr := range turns {
			reread += context // the turn that writes the call reads all so far
			context += tokens(tr.wrote) + tokens(tr.read)
			once += tokens(tr.wrote) + tokens(tr.read)
		}
		return once, reread + context // and the turn that answers
	}
	call := func(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (turn, *mcp.CallToolResult) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", name, err, harness.ScriptText(res))
		}
		wrote, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
		return turn{string(wrote), harness.ScriptText(res)}, res
	}
	defsOf := func(ctx context.Context, cs *mcp.ClientSession) (string, int) {
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list.Tools)
		return string(b), len(list.Tools)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Direct: five calls, every result through the model.
	e := mcpxtest.NewEnv(t)
	cs := harness.ConnectGoSDK(t, e, mcpxtest.Daemon, e.WriteConfig(nil, server), "2025-11-25", harness.NewProgressLog())
	defs, nTools := defsOf(ctx, cs)
	var turns []turn
	temps := map[string]float64{}
	for _, c := range cities {
		tr, res := call(ctx, cs, "everything__get-structured-content", map[string]any{"location": c})
		turns = append(turns, tr)
		var w struct{ Temperature float64 }
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &w)
		temps[c] = w.Temperature
	}
	sum := temps[cities[0]]
	for _, c := range cities[1:] {
		tr, res := call(ctx, cs, "everything__get-sum", map[string]any{"a": sum, "b": temps[c]})
		turns = append(turns, tr)
		text := harness.ScriptText(res)
		var n float64
		if i := strings.LastIndex(text, " "); i >= 0 {
			json.Unmarshal([]byte(strings.TrimSuffix(text[i+1:], ".")), &n)
		}
		sum = n
	}
	directOnce, directReread := measure(defs, turns)
	warmest := cities[0]
	for _, c := range cities {
		if temps[c] > temps[warmest] {
			warmest = c
		}
	}

	// One script, in code mode: the meta-tools, one describe, one exec.
	e2 := mcpxtest.NewEnv(t)
	cs2 := harness.ConnectGoSDK(t, e2, mcpxtest.Daemon, e2.WriteConfig(map[string]any{"codeMode": true}, server), "2025-11-25", harness.NewProgressLog())
	defs2, nTools2 := defsOf(ctx, cs2)
	describe, _ := call(ctx, cs2, "mcpx_describe", map[string]any{"tools": []string{"everything__get-structured-content", "everything__get-sum"}})
	code := `const cities = ["New York", "Chicago", "Los Angeles"];
const w = await Promise.all(cities.map(location => tools.everything["get-structured-content"]({ location })));
let sum = w[0].temperature;
for (const x of w.slice(1)) sum = Number((await tools.everything["get-sum"]({ a: sum, b: x.temperature })).match(/[-\d.]+(?=\D*$)/)[0]);
const warmest = cities[w.findIndex(x => x.temperature === Math.max(...w.map(x => x.temperature)))];
return { warmest, sum };`
	exec, res := call(ctx, cs2, "mcpx_exec", map[string]any{"code": code})
	var got struct {
		Warmest string
		Sum     float64
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &got)
	if got.Warmest != warmest || got.Sum != sum || warmest != "Los Angeles" {
		t.Fatalf("the script found %+v, the direct calls %s and %v", got, warmest, sum)
	}
	scriptOnce, scriptReread := measure(defs2, []turn{describe, exec})
	t.Logf("direct calls: %d tools listed (%d tokens), 5 calls: %d tokens once, %d re-read over 6 turns", nTools, tokens(defs), directOnce, directReread)
	t.Logf("one script:   %d tools listed (%d tokens), describe + exec: %d tokens once, %d re-read over 3 turns", nTools2, tokens(defs2), scriptOnce, scriptReread)
}
