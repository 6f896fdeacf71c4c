package demo

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// extMeta is a 2026-07-28 _meta whose clientCapabilities name the tasks
// extension.
const extMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

type demoTaskOut struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	Result        json.RawMessage `json:"result"`
	InputRequests map[string]struct {
		Method string `json:"method"`
	} `json:"inputRequests"`
}

// TestResearchTask: with Options.Tasks, research answers a request naming
// the extension with a task, which asks halfway (input_required), takes
// tasks/update's answer and completes with it; a second task is cancelled
// (recorded); a request without the extension gets a plain result, and
// tasks/get -32021; an unknown task is -32602.
func TestResearchTask(t *testing.T) {
	p := startPeer(t, &Options{Tasks: true})
	defer p.close()
	n := 0
	call := func(method, params string) json.RawMessage {
		t.Helper()
		n++
		id := `"r` + string(rune('a'+n%26)) + strings.Repeat("x", n/26) + `"`
		return result(t, p.call(id, req(id, method, params)))
	}
	task := func(raw json.RawMessage) demoTaskOut {
		t.Helper()
		var o demoTaskOut
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return o
	}
	get := func(id string) demoTaskOut {
		return task(call("tasks/get", `{"taskId":"`+id+`","_meta":`+extMeta+`}`))
	}
	until := func(id, status string) demoTaskOut {
		t.Helper()
		for end := time.Now().Add(deadline); ; time.Sleep(20 * time.Millisecond) {
			if o := get(id); o.Status == status || time.Now().After(end) {
				if o.Status != status {
					t.Fatalf("task %s is %s, not %s", id, o.Status, status)
				}
				return o
			}
		}
	}
	created := task(call("tools/call", `{"name":"research","arguments":{"topic":"tides","steps":2,"seconds":0.05,"ask":true},"_meta":`+extMeta+`}`))
	if created.ResultType != "task" || created.Status != "working" || !strings.HasPrefix(created.TaskID, "demo-task-") {
		t.Fatalf("created %+v", created)
	}
	asked := until(created.TaskID, "input_required")
	if asked.InputRequests["confirm"].Method != "elicitation/create" {
		t.Fatalf("input_required without the question: %+v", asked)
	}
	call("tasks/update", `{"taskId":"`+created.TaskID+`","inputResponses":{"confirm":{"action":"accept","content":{"ok":"yes"}}},"_meta":`+extMeta+`}`)
	done := until(created.TaskID, "completed")
	if !strings.Contains(string(done.Result), "researched tides in 2 steps (confirmed: accept yes)") {
		t.Errorf("completed task's result: %s", done.Result)
	}

	long := task(call("tools/call", `{"name":"research","arguments":{"topic":"kelp","steps":100,"seconds":1},"_meta":`+extMeta+`}`))
	call("tasks/cancel", `{"taskId":"`+long.TaskID+`","_meta":`+extMeta+`}`)
	if o := get(long.TaskID); o.Status != "cancelled" {
		t.Errorf("cancelled task reads %s", o.Status)
	}
	p.event(func(e Event) bool { return e.Event == EventCancelled && strings.Contains(e.Reason, long.TaskID) })

	plain := decodeTool(t, p.call(`"p"`, callReq(`"p"`, "research", `{"topic":"sand","steps":1,"seconds":0}`, modernMeta(""))))
	if plain.text() != "researched sand in 1 steps" {
		t.Errorf("plain call: %q", plain.text())
	}
	if e := rpcError(t, p.call(`"g"`, req(`"g"`, "tasks/get", `{"taskId":"`+long.TaskID+`","_meta":`+modernMeta("")+`}`))); e.Code != -32021 {
		t.Errorf("tasks/get without the extension: %+v", e)
	}
	if e := rpcError(t, p.call(`"u"`, req(`"u"`, "tasks/get", `{"taskId":"nope","_meta":`+extMeta+`}`))); e.Code != -32602 {
		t.Errorf("unknown task: %+v", e)
	}
}
