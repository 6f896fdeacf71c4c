package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestTasksBadInput: each hostile or wrong task request gets a defined
// answer, in-process and against the daemon. A negative or malformed ttl,
// a task of mcpx's own tools, an unknown id, a cursor mcpx never gave, a cancel of an ended task; tasks
// methods from a 2025-06-18 host, whose task member is ignored, as the
// revision says of a receiver that did not declare tasks.
func TestTasksBadInput(t *testing.T) {
	for _, mode := range []mcpxtest.Mode{mcpxtest.InProcess, mcpxtest.Daemon} {
		t.Run(string(mode), func(t *testing.T) {
			e := mcpxtest.NewEnv(t)
			cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
			h := e.StartHost(mode, cfg)
			other := e.StartHost(mode, cfg)
			old := e.StartHost(mode, cfg)
			for _, c := range []struct {
				h       *mcpxtest.Host
				version string
				tasks   bool
			}{{h, "2025-11-25", true}, {other, "2025-11-25", true}, {old, "2025-06-18", false}} {
				var init struct{ Capabilities map[string]json.RawMessage }
				if err := json.Unmarshal(c.h.Initialize(c.version), &init); err != nil {
					t.Fatal(err)
				}
				if _, ok := init.Capabilities["tasks"]; ok != c.tasks {
					t.Errorf("a %s host: capabilities %v, tasks declared %v, want %v", c.version, init.Capabilities, ok, c.tasks)
				}
			}

			wantErr := func(h *mcpxtest.Host, method string, params any, code int64, part string) {
				t.Helper()
				got, _ := harness.ResponseError(t, h, h.Request(method, params))
				if got.Code != code || !strings.Contains(got.Message, part) {
					t.Errorf("%s %v: %d %q, want %d with %q", method, params, got.Code, got.Message, code, part)
				}
			}
			call := func(tool string, task any) map[string]any {
				return map[string]any{"name": tool, "arguments": map[string]any{"text": "hi"}, "task": task}
			}
			wantErr(h, "tools/call", call("demo__echo", map[string]any{"ttl": -1}), -32602, "task.ttl")
			wantErr(h, "tools/call", call("demo__echo", "soon"), -32602, "task must be an object")
			wantErr(h, "tools/call", call("mcpx_search", map[string]any{}), -32601, "does not run as a task")
			wantErr(h, "tasks/get", map[string]any{"taskId": "job_nosuchtask"}, -32602, "no job has this id")
			wantErr(h, "tasks/get", map[string]any{}, -32602, "needs a taskId")
			wantErr(h, "tasks/list", map[string]any{"cursor": "bm90IG1pbmU"}, -32602, "unknown cursor")

			var created struct{ Task struct{ TaskID string } }
			if err := json.Unmarshal(h.Result(h.Request("tools/call", call("demo__echo", map[string]any{"ttl": 5000})), harness.WaitLong), &created); err != nil || created.Task.TaskID == "" {
				t.Fatalf("task-augmented echo: %v", err)
			}
			id := created.Task.TaskID
			if res := h.Result(h.Request("tasks/result", map[string]any{"taskId": id}), harness.WaitLong); !strings.Contains(string(res), id) {
				t.Errorf("tasks/result %s lacks its related-task %s", res, id)
			}
			wantErr(h, "tasks/cancel", map[string]any{"taskId": id}, -32602, "has ended (completed)")
			// Another connection is the same local user: it finds the
			// task (TestJobPrincipals has a principal that may not).
			var list struct{ Tasks []struct{ TaskID string } }
			if err := json.Unmarshal(other.Result(other.Request("tasks/list", map[string]any{}), harness.WaitLong), &list); err != nil || len(list.Tasks) != 1 || list.Tasks[0].TaskID != id {
				t.Errorf("the other connection's tasks/list: %+v %v, want the task", list, err)
			}

			wantErr(old, "tasks/get", map[string]any{"taskId": id}, -32601, "method not found")
			res := old.Result(old.Request("tools/call", call("demo__echo", map[string]any{})), harness.WaitLong)
			if strings.Contains(string(res), `"task"`) || !strings.Contains(string(res), "content") {
				t.Errorf("a 2025-06-18 host's call with a task member: %s, want a plain tool result", res)
			}
		})
	}
}
