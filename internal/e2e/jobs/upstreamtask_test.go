package jobs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestUpstreamTask: server-everything's simulate-research-query, whose
// taskSupport is required, called through mcpx by a plain 2025-11-25
// host, in-process and against the daemon. mcpx calls it as a task of
// the server's, follows it with tasks/get, passes its stage messages on
// as progress under the host's token, and answers the host the report
// from tasks/result. A second call cancelled by the host mid-way sends
// the server tasks/cancel for its task (seen on the wire by a tap). A
// 2026-07-28 host that takes tasks calls it with ambiguous: true: its
// task of mcpx's reads input_required with the server's question (which
// came on the tasks/result mcpx waits on), and the host's tasks/update
// answers it: the report names the interpretation picked.
func TestUpstreamTask(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		tapPath := e.Path("tap.jsonl")
		cfg := e.Path("config.json")
		b, _ := json.Marshal(map[string]any{
			"mcpx": map[string]any{"jobs": map[string]any{"taskAfter": "300ms", "taskPollInterval": "100ms"}},
			"mcpServers": map[string]any{"everything": map[string]any{
				"command": node, "args": []string{filepath.Join(interop, "tap.mjs"), tapPath, "--", node, everything, "stdio"},
			}},
		})
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		const tool = "everything__simulate-research-query"
		res := h.Result(h.Request("tools/call", map[string]any{"name": tool, "arguments": map[string]any{"topic": "tide pools"},
			"_meta": map[string]any{"progressToken": "research"}}), 60*time.Second)
		if !strings.Contains(harness.ResultText(t, res), "Research Report: tide pools") || strings.Contains(string(res), "related-task") {
			t.Fatalf("the research result: %.300s", res)
		}
		var stages []string
		for _, r := range harness.ProgressFor(t, h, `"research"`) {
			if p, ok := harness.AsProgress(t, r); ok {
				stages = append(stages, string(p.Message))
			}
		}
		// Polled at the server's 1 s, which is also a stage's length: a
		// stage's message may come and go between two polls.
		if len(stages) < 2 || !strings.Contains(strings.Join(stages, "|"), "Generating report") {
			t.Errorf("progress from the task's status messages: %q", stages)
		}
		sent := func(method string) int {
			n := 0
			for _, en := range harness.ReadTapLog(t, tapPath).Entries {
				if en.Dir == "in" && en.Msg.Method == method {
					n++
				}
			}
			return n
		}
		if sent("tasks/get") < 2 || sent("tasks/result") != 1 {
			t.Errorf("mcpx sent the server %d tasks/get and %d tasks/result", sent("tasks/get"), sent("tasks/result"))
		}

		id := harness.SendCall(h, `"r2"`, tool, map[string]any{"topic": "kelp"}, map[string]any{"progressToken": "kelp"})
		h.WaitFor(harness.WaitLong, "progress of the second task", func(r mcpxtest.Received) bool {
			p, ok := harness.AsProgress(t, r)
			return ok && string(p.Token) == `"kelp"`
		})
		harness.Cancel(h, `"r2"`, "the user gave up")
		h.NoResponse(id, 300*time.Millisecond)
		for deadline := time.Now().Add(harness.WaitLong); sent("tasks/cancel") == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the host's cancel sent the server no tasks/cancel")
			}
		}
		var cancelled struct {
			TaskID string `json:"taskId"`
		}
		for _, en := range harness.ReadTapLog(t, tapPath).Entries {
			if en.Dir == "in" && en.Msg.Method == "tasks/cancel" {
				_ = json.Unmarshal(en.Msg.Params, &cancelled)
			}
		}

		h2 := e.StartHost(mode, cfg)
		created := extTaskOf(t, h2.Result(h2.Request("tools/call", takingTasks(map[string]any{"name": tool,
			"arguments": map[string]any{"topic": "python", "ambiguous": true}})), harness.WaitLong))
		if created.ResultType != "task" {
			t.Fatalf("CreateTaskResult: %+v", created)
		}
		done := answerTask(t, h2, created.TaskID, func(raw json.RawMessage) bool {
			var q struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			return json.Unmarshal(raw, &q) == nil && q.Method == "elicitation/create" && strings.Contains(string(q.Params), "Monty Python")
		}, map[string]any{"interpretation": "comedy"})
		if !strings.Contains(harness.ResultText(t, done.Result), "Research Report: python (comedy)") {
			t.Errorf("the research after the host's answer: %.300s", done.Result)
		}
		t.Logf("followed the server's task through %d stages; the cancel reached task %s; a 2026-07-28 host's tasks/update answered the server's question", len(stages), cancelled.TaskID)
	})
}
