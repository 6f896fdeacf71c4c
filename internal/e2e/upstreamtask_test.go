package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// TestUpstreamTask: server-everything's simulate-research-query, whose
// taskSupport is required, called through mcpx by a plain 2025-11-25
// host, in-process and against the daemon. mcpx calls it as a task of
// the server's, follows it with tasks/get, passes its stage messages on
// as progress under the host's token, and answers the host the report
// from tasks/result. A second call cancelled by the host mid-way sends
// the server tasks/cancel for its task (seen on the wire by a tap).
func TestUpstreamTask(t *testing.T) {
	node, interop := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		tapPath := e.Path("tap.jsonl")
		cfg := writeServersConfig(t, e, map[string]any{"everything": map[string]any{
			"command": node, "args": []string{filepath.Join(interop, "tap.mjs"), tapPath, "--", node, everything, "stdio"},
		}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		const tool = "everything__simulate-research-query"
		res := h.Result(h.Request("tools/call", map[string]any{"name": tool, "arguments": map[string]any{"topic": "tide pools"},
			"_meta": map[string]any{"progressToken": "research"}}), 60*time.Second)
		if !strings.Contains(resultText(t, res), "Research Report: tide pools") || strings.Contains(string(res), "related-task") {
			t.Fatalf("the research result: %.300s", res)
		}
		var stages []string
		for _, r := range progressFor(t, h, `"research"`) {
			if p, ok := asProgress(t, r); ok {
				stages = append(stages, string(p.Message))
			}
		}
		if len(stages) < 3 || !strings.Contains(strings.Join(stages, "|"), "Analyzing content") {
			t.Errorf("progress from the task's status messages: %q", stages)
		}
		sent := func(method string) int {
			n := 0
			for _, en := range readTapLog(t, tapPath).entries {
				if en.dir == "in" && en.msg.Method == method {
					n++
				}
			}
			return n
		}
		if sent("tasks/get") < 2 || sent("tasks/result") != 1 {
			t.Errorf("mcpx sent the server %d tasks/get and %d tasks/result", sent("tasks/get"), sent("tasks/result"))
		}

		id := sendCall(h, `"r2"`, tool, map[string]any{"topic": "kelp"}, map[string]any{"progressToken": "kelp"})
		h.WaitFor(waitLong, "progress of the second task", func(r mcpxtest.Received) bool {
			p, ok := asProgress(t, r)
			return ok && string(p.Token) == `"kelp"`
		})
		cancel(h, `"r2"`, "the user gave up")
		h.NoResponse(id, 300*time.Millisecond)
		for deadline := time.Now().Add(waitLong); sent("tasks/cancel") == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the host's cancel sent the server no tasks/cancel")
			}
		}
		var cancelled struct {
			TaskID string `json:"taskId"`
		}
		for _, en := range readTapLog(t, tapPath).entries {
			if en.dir == "in" && en.msg.Method == "tasks/cancel" {
				_ = json.Unmarshal(en.msg.Params, &cancelled)
			}
		}
		t.Logf("followed the server's task through %d stages; the cancel reached task %s", len(stages), cancelled.TaskID)
	})
}
