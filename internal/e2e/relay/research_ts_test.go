package relay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// researchReport is what researchhost.mjs reports.
type researchReport struct {
	OK          bool   `json:"ok"`
	Error       string `json:"error"`
	TaskSupport string `json:"taskSupport"`
	Questions   []struct {
		Message     string   `json:"message"`
		RelatedTask *string  `json:"relatedTask"`
		Options     []string `json:"options"`
	} `json:"questions"`
	Research struct {
		TaskID   string   `json:"taskId"`
		Statuses []string `json:"statuses"`
		Text     string   `json:"text"`
		Error    string   `json:"error"`
	} `json:"research"`
	Cancel struct {
		TaskID        string `json:"taskId"`
		StatusMessage string `json:"statusMessage"`
		Answer        string `json:"answer"`
		Error         *struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"cancel"`
}

// TestResearchTSHosts: server-everything's simulate-research-query with
// ambiguous: true, which the server runs as a task of its own and which
// asks its host a question halfway (an elicitation that comes on the
// tasks/result mcpx waits on), called through mcpx by TypeScript SDK
// hosts, over stdio and HTTP, in-process and against the daemon: v1 on
// 2025-11-25 and v2 pinned to 2025-11-25 make it a task of mcpx's (which
// reads input_required, and whose tasks/result carries the question,
// tagged with the task, to the host); v2 pinned to 2026-07-28 makes a
// plain call (the question comes as input_required, and the SDK's retry
// resumes the call). In each, the host's answer reaches the server (its
// report names the interpretation picked), and a second call cancelled
// mid-way sends the server tasks/cancel (seen in a tap).
func TestResearchTSHosts(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	hosts := []struct{ sdk, era string }{{"v1", "2025-11-25"}, {"v2", "2025-11-25"}, {"v2", "2026-07-28"}}
	for _, hc := range hosts {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(hc.sdk+"-"+hc.era+"-"+transport, func(t *testing.T) {
				t.Parallel()
				mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
					e := mcpxtest.NewEnv(t)
					tapPath := e.Path("tap.jsonl")
					cfg := e.Path("config.json")
					b, _ := json.Marshal(map[string]any{
						"mcpx": map[string]any{"jobs": map[string]any{"taskPollInterval": "100ms"}},
						"mcpServers": map[string]any{"everything": map[string]any{
							"command": node, "args": []string{filepath.Join(interop, "tap.mjs"), tapPath, "--", node, everything, "stdio"},
						}},
					})
					if err := os.WriteFile(cfg, b, 0o600); err != nil {
						t.Fatal(err)
					}
					spec := map[string]any{"sdk": hc.sdk, "era": hc.era, "transport": transport, "tool": "everything__simulate-research-query",
						"answer": "historical", "deadlineMs": 80000}
					harness.ReachMcpx(t, e, mode, transport, cfg, spec)
					out, stderr, err := harness.RunHostScript(t, e, node, interop, "researchhost.mjs", spec)
					var r researchReport
					if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil {
						t.Fatalf("researchhost.mjs: %v %v\nstdout %s\nstderr %s", err, jerr, out, stderr)
					}
					if !r.OK {
						t.Fatalf("researchhost.mjs failed: %s\nstderr %s", r.Error, stderr)
					}
					tasks := hc.era == "2025-11-25"
					if tasks && r.TaskSupport != "required" {
						t.Errorf("taskSupport %q, want the server's required", r.TaskSupport)
					}
					if len(r.Questions) != 1 || !strings.Contains(r.Questions[0].Message, "the tides") || !slices.Contains(r.Questions[0].Options, "historical") {
						t.Fatalf("the host was asked %+v, want the server's one question", r.Questions)
					}
					if tasks && (r.Questions[0].RelatedTask == nil || *r.Questions[0].RelatedTask != r.Research.TaskID) {
						t.Errorf("the question names task %v, want the host's task %s", r.Questions[0].RelatedTask, r.Research.TaskID)
					}
					if !strings.Contains(r.Research.Text, "Research Report: the tides (historical)") || r.Research.Error != "" {
						t.Errorf("the research result %q (error %q) does not carry the host's answer", r.Research.Text, r.Research.Error)
					}
					if tasks && (!strings.HasPrefix(r.Research.TaskID, "job_") || !slices.Contains(r.Research.Statuses, "input_required")) {
						t.Errorf("the host's task %s went %v, want input_required on the way", r.Research.TaskID, r.Research.Statuses)
					}
					if tasks && r.Cancel.Answer != "cancelled" || !tasks && r.Cancel.Error == nil {
						t.Errorf("the cancelled call: %+v", r.Cancel)
					}
					// The server's side: its question went on its
					// tasks/result, the answer came back, and the second
					// task was cancelled.
					upTask, answered, cancels := "", false, 0
					harness.WaitUntil(t, harness.WaitLong, "the server's tasks/cancel", func() bool {
						l := harness.ReadTapLog(t, tapPath)
						cancels = 0
						for _, en := range l.Entries {
							switch {
							case en.Dir == "out" && en.Msg.Method == "elicitation/create":
								var p struct {
									Meta map[string]struct {
										TaskID string `json:"taskId"`
									} `json:"_meta"`
								}
								_ = json.Unmarshal(en.Msg.Params, &p)
								upTask = p.Meta["io.modelcontextprotocol/related-task"].TaskID
							case en.Dir == "in" && en.Msg.Method == "" && strings.Contains(en.Line, `"historical"`):
								answered = true
							case en.Dir == "in" && en.Msg.Method == "tasks/cancel":
								cancels++
							}
						}
						return cancels > 0
					})
					if upTask == "" || !answered {
						t.Errorf("at the server: question for task %q, answered %v", upTask, answered)
					}
					t.Logf("%s %s %s: statuses %v; the server's task %s asked, the host answered; %d tasks/cancel", hc.sdk, hc.era, transport, r.Research.Statuses, upTask, cancels)
				})
			})
		}
	}
}
