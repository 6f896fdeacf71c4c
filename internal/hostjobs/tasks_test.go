package hostjobs

import (
	"encoding/json"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// TestGrantedTTL: the ttl a task's job keeps is read back from its
// params; a job that keeps none reads the bound.
func TestGrantedTTL(t *testing.T) {
	s := &Tasks{MaxTTL: time.Hour}
	kept := WithGrantedTTL(json.RawMessage(`{"name":"x","arguments":{"task":"not this one"},"task":{"ttl":5}}`), 60*time.Second)
	var p struct {
		Arguments struct{ Task string }
		Task      struct{ TTL int64 }
	}
	if err := json.Unmarshal(kept, &p); err != nil || p.Task.TTL != 60000 || p.Arguments.Task != "not this one" {
		t.Fatalf("withGrantedTTL: %s %v", kept, err)
	}
	if got := s.GrantedTTL(&store.Job{Params: kept}); got != 60*time.Second {
		t.Errorf("GrantedTTL = %v, want 1m", got)
	}
}

// TestFailure: a failed task answers its call's own error, kept as its
// job's result; one kept without answers -32603 with its text.
func TestFailure(t *testing.T) {
	kept := jsonrpc.MustMarshal(&jsonrpc.Error{Code: -31001, Message: "mcpx: timed out"})
	if e := Failure(&store.Job{ID: "j", Status: store.Failed, Result: kept, Error: "timed out"}); e.Code != -31001 || e.Message != "mcpx: timed out" {
		t.Errorf("kept error: %+v", e)
	}
	if e := Failure(&store.Job{ID: "j", Status: store.Failed, Error: "broke"}); e.Code != jsonrpc.CodeInternalError || e.Message != `task "j" failed: broke` {
		t.Errorf("no kept error: %+v", e)
	}
	if e := Failure(&store.Job{ID: "j", Status: store.Cancelled, Error: "by the host"}); e.Code != jsonrpc.CodeInternalError {
		t.Errorf("cancelled: %+v", e)
	}
}

// TestTaskInput: questions asked by a task's call are pending until
// answered (partly, then wholly); an error answer is the call's error;
// answering closes a question's gone.
func TestTaskInput(t *testing.T) {
	s := &Tasks{}
	ti := s.taskInputOf("job_1", nil)
	ti.mu.Lock()
	ti.pending["q"] = &question{req: relay.InputRequest{Method: "elicitation/create"}, gone: make(chan struct{})}
	ti.mu.Unlock()
	if q := s.Pending("job_1"); q["q"].Method != "elicitation/create" {
		t.Fatalf("pendingOf = %v", q)
	}
	if sent := ti.take(); len(sent) != 1 || len(ti.take()) != 0 {
		t.Fatalf("take: each question is sent once")
	}
	ti.unsend("q")
	if len(ti.take()) != 1 {
		t.Fatal("an unanswered question is sent again")
	}
	ti.answer(map[string]json.RawMessage{"never": json.RawMessage(`{}`), "q": json.RawMessage(`{"action":"accept"}`)})
	if s.Pending("job_1") != nil || string(ti.answers["q"].res) != `{"action":"accept"}` || len(ti.answers) != 1 {
		t.Fatalf("after the answer: pending %v, answers %v", s.Pending("job_1"), ti.answers)
	}

	r := &question{gone: make(chan struct{})}
	ti.mu.Lock()
	ti.pending["r"] = r
	ti.settleLocked("r", answer{err: jsonrpc.Errorf(-1, "declined")})
	ti.mu.Unlock()
	select {
	case <-r.gone:
	default:
		t.Fatal("an answered question is not gone")
	}
	if ti.answers["r"].err == nil {
		t.Fatal("an error answer is kept")
	}
}
