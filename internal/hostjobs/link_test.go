package hostjobs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jobs/jobstest"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/outq"
	"mcpx/internal/relay"
)

// jsonHost is the Host of a legacy HTTP host's call whose POST is
// answered as plain JSON (the link has no Asker), with its session's GET
// stream open (stream, whose lines go to sent). Job holds the call's
// promotion where its row is about to be written: it says so on making
// and goes on when written is closed.
type jsonHost struct {
	Host
	making, written chan struct{}
	stream          *outq.Queue
	sent            chan []byte
	questions       jsonrpc.Pending
	replied         chan *jobs.Call
	ended           chan struct{}
}

func newJSONHost() *jsonHost {
	h := &jsonHost{making: make(chan struct{}), written: make(chan struct{}), sent: make(chan []byte, 4),
		replied: make(chan *jobs.Call, 1), ended: make(chan struct{})}
	h.stream = outq.New(outq.Options{WriteNow: func(b []byte) int {
		h.sent <- bytes.Clone(b)
		return len(b)
	}})
	return h
}

func (h *jsonHost) Entry() *relay.Entry { return nil }
func (h *jsonHost) Job() (context.Context, jobs.Spec, context.CancelCauseFunc) {
	close(h.making)
	<-h.written
	return context.Background(), jobs.Spec{Principal: jobs.LocalPrincipal, Server: "demo", Tool: "ask_later", Key: "k"}, func(error) {}
}
func (h *jsonHost) ReplyJob(c *jobs.Call)                 { h.replied <- c }
func (h *jsonHost) Release()                              {}
func (h *jsonHost) Modern() bool                          { return false }
func (h *jsonHost) IsTask() bool                          { return false }
func (h *jsonHost) Declares(string, json.RawMessage) bool { return true }
func (h *jsonHost) RequestID() string                     { return "1" }
func (h *jsonHost) Log() *slog.Logger                     { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func (h *jsonHost) HostID() string                        { return "http-1" }
func (h *jsonHost) JobStream() *outq.Queue                { return h.stream }
func (h *jsonHost) Reopens() bool                         { return true }
func (h *jsonHost) StreamNext() <-chan struct{}           { return make(chan struct{}) }
func (h *jsonHost) Ended() <-chan struct{}                { return h.ended }
func (h *jsonHost) Questions() *jsonrpc.Pending           { return &h.questions }

// TestLinkAsksWhileMade: a call whose host's POST is answered as plain
// JSON asks its host nothing before its deadline; a question its
// upstream sends while the call is being made a job (its row being
// written, slow on a loaded machine) is the job's: it reaches the host on
// its session's stream once the job is made, and the host's answer comes
// back.
func TestLinkAsksWhileMade(t *testing.T) {
	m := jobstest.Start(t)

	h := newJSONHost()
	l := &Link{Host: h, Jobs: m}
	method, params := "elicitation/create", json.RawMessage(`{"mode":"form","message":"Which colour?","requestedSchema":{"type":"object"}}`)
	if l.Can(method, params) {
		t.Error("Can before the deadline = true: a plain JSON response carries no question")
	}
	if _, err := l.Ask(t.Context(), method, params); err == nil {
		t.Error("Ask before the deadline: no error")
	}

	promoted := make(chan struct{})
	go func() { defer close(promoted); l.DeadlineReached() }()
	<-h.making
	if !l.Can(method, params) {
		t.Error("Can while the call is being made a job = false, want true: the question is the job's")
	}
	type outcome struct {
		res json.RawMessage
		err error
	}
	asked := make(chan outcome, 1)
	go func() {
		res, err := l.Ask(t.Context(), method, params)
		asked <- outcome{res, err}
	}()
	close(h.written)
	<-promoted
	c := <-h.replied
	defer l.End(json.RawMessage(`{"content":[]}`), nil)

	var got outcome
	select {
	case line := <-h.sent:
		q, err := jsonrpc.Decode(bytes.TrimSpace(line))
		if err != nil || q.Method != method || !bytes.Contains(q.Params, []byte("Which colour?")) {
			t.Fatalf("the host's stream got %s (%v), want the question", line, err)
		}
		h.questions.Answer(&jsonrpc.Message{ID: q.ID, Result: json.RawMessage(`{"action":"accept","content":{"answer":"teal"}}`)})
		got = <-asked
	case got = <-asked:
		t.Fatalf("Ask returned %s, %v without putting the question to the host", got.res, got.err)
	case <-time.After(10 * time.Second):
		t.Fatal("no question on the host's stream within 10s")
	}
	if got.err != nil || !bytes.Contains(got.res, []byte("teal")) {
		t.Fatalf("Ask = %s, %v, want the host's answer", got.res, got.err)
	}
	if l.JobCall() != c {
		t.Errorf("the link's job is not the one its host was answered with")
	}
}
