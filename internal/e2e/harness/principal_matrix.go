package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The principal matrix: every principal, on each of its MCP faces, tries
// every operation on every other principal's jobs, tasks, tools,
// resources and prompts, and each cell says what must come of it.

// MatrixActor is one host (or one token's hosts) of the matrix.
type MatrixActor struct {
	Name     string
	Owner    string // the principal that owns its jobs: actors of one owner share them
	Filtered bool   // its host filter allows the tools of server a alone
	Faces    []PolicyFace
}

// MatrixJob is a job an actor started.
type MatrixJob struct {
	Id, Tool, Text string // text: a done job's result; "" for one that runs
	By             *MatrixActor
}

// What a host is told of a job it may not see.
const (
	ForeignJob = "the job belongs to another principal"
	HiddenText = "no job has this id"
)

// JobCell checks what face f of reader gets for each job-reading
// operation on j: want is "" (it reads j), foreignJob or hiddenText.
func JobCell(t *testing.T, f PolicyFace, j MatrixJob, want string) {
	t.Helper()
	cell := fmt.Sprintf("%s on %s's job of %s", f.Name, j.By.Name, j.Tool)
	text, isErr := f.ToolText(t, "mcpx_job", map[string]any{"job_id": j.Id, "wait_seconds": 0})
	switch {
	case want != "":
		if !isErr || !strings.Contains(text, want) || j.Text != "" && strings.Contains(text, j.Text) {
			t.Errorf("%s: mcpx_job: isError %v %q, want %q", cell, isErr, text, want)
		}
		if text, isErr := f.ToolText(t, "mcpx_job_cancel", map[string]any{"job_id": j.Id}); !isErr || !strings.Contains(text, want) {
			t.Errorf("%s: mcpx_job_cancel: isError %v %q, want %q", cell, isErr, text, want)
		}
	case j.Text != "" && (isErr || text != j.Text):
		t.Errorf("%s: mcpx_job: isError %v %q, want %q", cell, isErr, text, j.Text)
	case j.Text == "" && (isErr || !strings.Contains(text, "running")):
		t.Errorf("%s: mcpx_job: isError %v %q, want it running", cell, isErr, text)
	}
	methods := []string{"tasks/get"}
	if want != "" {
		methods = append(methods, "tasks/cancel")
	}
	if !f.Modern && j.Text != "" {
		methods = append(methods, "tasks/result")
	}
	for _, m := range methods {
		got := f.Call(t, m, map[string]any{"taskId": j.Id})
		if want == "" && got.Error != nil || want != "" && (got.Error == nil || got.Error.Code != -32602 || !strings.Contains(got.Error.Message, want)) {
			t.Errorf("%s: %s: %s, want %q", cell, m, got.Encode(), Or(want, "it read"))
		}
		if want != "" && j.Text != "" && strings.Contains(string(got.Encode()), j.Text) {
			t.Errorf("%s: %s answers with the job's result: %s", cell, m, got.Encode())
		}
	}
}

func Or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TaskIDs returns the ids tasks/list gives face f.
func TaskIDs(t *testing.T, f PolicyFace) []string {
	t.Helper()
	var list struct {
		Tasks      []struct{ TaskID string }
		NextCursor string
	}
	m := f.Call(t, "tasks/list", nil)
	if m.Error != nil || json.Unmarshal(m.Result, &list) != nil || list.NextCursor != "" {
		t.Fatalf("%s: tasks/list: %s", f.Name, m.Encode())
	}
	var ids []string
	for _, tk := range list.Tasks {
		ids = append(ids, tk.TaskID)
	}
	return ids
}

// ToolCell checks that face f calls server b's echo, directly, through
// mcpx_call and through mcpx_exec's tools.* and mcpx.call, if allowed,
// and else is refused with the filter's message each way; it returns
// how many calls were to reach b.
func ToolCell(t *testing.T, f PolicyFace, allowed bool, server string) int {
	t.Helper()
	tool := server + "__echo"
	refusal := fmt.Sprintf(`tool %q is not allowed for this host`, tool)
	ways := []struct {
		way  string
		name string
		args map[string]any
	}{
		{"tools/call", tool, map[string]any{"pin": "x"}},
		{"mcpx_call", "mcpx_call", map[string]any{"name": tool, "arguments": map[string]any{"pin": "x"}}},
		{"mcpx_exec tools.*", "mcpx_exec", map[string]any{"code": fmt.Sprintf(`return await tools.%s.echo({pin: "x"})`, server)}},
		{"mcpx_exec mcpx.call", "mcpx_exec", map[string]any{"code": fmt.Sprintf(`return await mcpx.call(%q, {pin: "x"})`, tool)}},
	}
	for _, w := range ways {
		m := f.Call(t, "tools/call", map[string]any{"name": w.name, "arguments": w.args})
		got := string(m.Encode())
		if !allowed && !strings.Contains(strings.ReplaceAll(got, `\"`, `"`), refusal) {
			t.Errorf("%s: %s of %s: %s, want %q", f.Name, w.way, tool, got, refusal)
		}
		if allowed && (m.Error != nil || strings.Contains(got, `"isError":true`) || !strings.Contains(got, `pin`)) {
			t.Errorf("%s: %s of %s: %s, want its result", f.Name, w.way, tool, got)
		}
	}
	listed := strings.Contains(string(f.Call(t, "tools/list", nil).Result), `"name":"`+tool+`"`)
	if listed != allowed {
		t.Errorf("%s: tools/list lists %s: %v, want %v", f.Name, tool, listed, allowed)
	}
	if allowed {
		return len(ways)
	}
	return 0
}
