package jobs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// taskHostReport is what taskhost.mjs reports.
type taskHostReport struct {
	OK              bool            `json:"ok"`
	Error           string          `json:"error"`
	Capability      json.RawMessage `json:"capability"`
	TaskSupport     string          `json:"taskSupport"`
	MetaTaskSupport *string         `json:"metaTaskSupport"`
	Done            struct {
		TaskID   string   `json:"taskId"`
		Messages []string `json:"messages"`
		Text     string   `json:"text"`
		Related  string   `json:"related"`
		Error    string   `json:"error"`
		Created  struct {
			Status       string `json:"status"`
			TTL          int64  `json:"ttl"`
			PollInterval int64  `json:"pollInterval"`
		} `json:"created"`
	} `json:"done"`
	Cancel struct {
		TaskID        string     `json:"taskId"`
		Before        string     `json:"before"`
		StatusMessage string     `json:"statusMessage"`
		Answer        string     `json:"answer"`
		After         string     `json:"after"`
		Again         *taskError `json:"again"`
		Result        *taskError `json:"result"`
	} `json:"cancel"`
	Listed        []string     `json:"listed"`
	Unknown       *taskError   `json:"unknown"`
	Notifications []taskStatus `json:"notifications"`
}

type taskError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type taskStatus struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

// TestTaskTSHost: a TypeScript SDK v1 host speaking 2025-11-25 tasks,
// over stdio (it spawns mcpx serve) and HTTP, in-process and against the
// daemon. mcpx declares tasks and shows the demo's tools as
// taskSupport optional; a task-augmented call of a slow tool is polled to
// its result (granted the ttl asked for, polled at the configured
// interval); a second one, cancelled mid-way, reads cancelled and its
// cancel reached the upstream; a second cancel and an unknown id are
// -32602; tasks/list has both. Each ran once at the upstream.
func TestTaskTSHost(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfg := e.WriteConfig(map[string]any{"jobs": map[string]any{"taskPollInterval": "100ms", "taskMaxTtl": "1h"}}, mcpxtest.Demo{Name: "demo"})
				// The polled call waits for its gate, which the host opens once a
				// poll has shown it working: it cannot end before the first poll.
				spec := map[string]any{"transport": transport, "tool": "demo__sleep_then", "seconds": 50, "gate": e.Path("gate"),
					"cancelTool": "demo__export", "deadlineMs": 60000}
				harness.ReachMcpx(t, e, mode, transport, cfg, spec)
				out, stderr, err := harness.RunHostScript(t, e, node, interop, "taskhost.mjs", spec)
				var r taskHostReport
				if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil {
					t.Fatalf("taskhost.mjs: %v %v\nstdout %s\nstderr %s", err, jerr, out, stderr)
				}
				if !r.OK {
					t.Fatalf("taskhost.mjs failed: %s", r.Error)
				}
				var capab struct {
					List, Cancel *struct{}
					Requests     struct {
						Tools struct {
							Call *struct{}
						}
					}
				}
				if json.Unmarshal(r.Capability, &capab) != nil || capab.List == nil || capab.Cancel == nil || capab.Requests.Tools.Call == nil {
					t.Errorf("capabilities.tasks = %s", r.Capability)
				}
				if r.TaskSupport != "optional" || r.MetaTaskSupport != nil {
					t.Errorf("taskSupport: demo tool %q, mcpx_search %v; want optional and none", r.TaskSupport, r.MetaTaskSupport)
				}
				d := r.Done
				if !strings.HasPrefix(d.TaskID, "job_") || d.Created.Status != "working" || d.Created.TTL != 60000 || d.Created.PollInterval != 100 {
					t.Errorf("created task: %s %+v", d.TaskID, d.Created)
				}
				if d.Text != "the task is done" || d.Related != d.TaskID || d.Error != "" || !slices.Contains(d.Messages, "working") ||
					d.Messages[len(d.Messages)-2] != "completed" || d.Messages[len(d.Messages)-1] != "result" {
					t.Errorf("polled task: %+v", d)
				}
				c := r.Cancel
				if c.Before != "working" || c.StatusMessage == "" || c.Answer != "cancelled" || c.After != "cancelled" {
					t.Errorf("cancelled task: %+v", c)
				}
				if c.Again == nil || c.Again.Code != -32602 || c.Result == nil || !strings.Contains(c.Result.Message, "cancelled") {
					t.Errorf("after the cancel: second cancel %+v, tasks/result %+v", c.Again, c.Result)
				}
				if r.Unknown == nil || r.Unknown.Code != -32602 || !strings.Contains(r.Unknown.Message, "no job has this id") {
					t.Errorf("unknown task: %+v", r.Unknown)
				}
				if !slices.Contains(r.Listed, d.TaskID) || !slices.Contains(r.Listed, c.TaskID) {
					t.Errorf("tasks/list %v lacks %s or %s", r.Listed, d.TaskID, c.TaskID)
				}
				ev := e.WaitRecord("demo", harness.WaitLong, func(ev demo.Event) bool { return ev.Event == demo.EventCancelled && ev.Tool == "export" })
				if !strings.Contains(ev.Reason, "tasks/cancel") {
					t.Errorf("the upstream's cancel says %q, want it to name tasks/cancel", ev.Reason)
				}
				if n, m := harness.Executions(e, "demo", "sleep_then"), harness.Executions(e, "demo", "export"); n != 1 || m != 1 {
					t.Errorf("the upstream ran sleep_then %d and export %d times, want 1 each", n, m)
				}
				if transport == "stdio" && !slices.Contains(r.Notifications, taskStatus{d.TaskID, "completed"}) {
					t.Errorf("no notifications/tasks/status completed for %s: %v", d.TaskID, r.Notifications)
				}
				t.Logf("%s: task polled %v; cancel reached the upstream (%q); %d status notifications", transport, d.Messages, ev.Reason, len(r.Notifications))
			})
		})
	}
}
