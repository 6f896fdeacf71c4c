package bridge

import (
	"encoding/json"
	"testing"
	"time"
)

// TestCreatedTask: a 2025-11-25 CreateTaskResult is a task only when mcpx
// asked for one; a 2026-07-28 one by its resultType; a plain result,
// even one whose text says "task", is none.
func TestCreatedTask(t *testing.T) {
	for _, tc := range []struct {
		res    string
		asked  bool
		id     string
		modern bool
		poll   time.Duration
	}{
		{`{"task":{"taskId":"t1","status":"working","pollInterval":200}}`, true, "t1", false, 200 * time.Millisecond},
		{`{"task":{"taskId":"t1","status":"working"}}`, false, "", false, 0},
		{`{"resultType":"task","taskId":"t2","status":"working","pollIntervalMs":10}`, false, "t2", true, minTaskPoll},
		{`{"resultType":"task","taskId":"t3","status":"working","pollIntervalMs":99999999}`, false, "t3", true, maxTaskPoll},
		{`{"resultType":"complete","content":[{"type":"text","text":"\"task\""}]}`, false, "", false, 0},
		{`{"content":[{"type":"text","text":"a task"}]}`, true, "", false, 0},
	} {
		task, ok := createdTask(json.RawMessage(tc.res), tc.asked)
		if ok != (tc.id != "") || ok && (task.TaskID != tc.id || task.modern != tc.modern || task.poll() != tc.poll) {
			t.Errorf("createdTask(%s, %v) = %+v, %v", tc.res, tc.asked, task, ok)
		}
	}
}

func TestWithoutRelatedTask(t *testing.T) {
	in := `{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"},"k":1}}`
	if got := string(withoutRelatedTask(json.RawMessage(in))); got != `{"content":[],"_meta":{"k":1}}` {
		t.Errorf("withoutRelatedTask = %s", got)
	}
	if got := string(withoutRelatedTask(json.RawMessage(`{"content":[]}`))); got != `{"content":[]}` {
		t.Errorf("a result without it changed: %s", got)
	}
}
