package hostserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/jobs/jobstest"
	"mcpx/internal/jsonrpc"
)

// jobAskFixture is a job that a host's call became, and that host: its
// session, with or without its stream (what the job's questions go on).
type jobAskFixture struct {
	hs    *hostSession
	req   *request
	link  *jobHost
	lines chan []byte // what the host's stream wrote
	end   func()      // ends the host's stream (the host left)
	conn  *connSink   // the host's stream, nil without one
}

// askHost is the fixture's hostjobs.Host: the session's, but its request
// has no host to answer.
type askHost struct {
	*jobHost
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (a *askHost) Job() (context.Context, jobs.Spec, context.CancelCauseFunc) {
	return a.ctx, jobs.Spec{Principal: jobs.LocalPrincipal, Server: "demo", Tool: "ask_later", Key: "k"}, a.cancel
}
func (a *askHost) ReplyJob(*jobs.Call) {}
func (a *askHost) Release() {
	if a.req.sink != nil {
		a.req.sink.finish()
	}
}

// newJobAsk makes the fixture: caps are the host's capabilities, stream
// whether it has a stream outside its requests, modern a 2026-07-28 host.
func newJobAsk(t *testing.T, caps string, stream, modern bool) *jobAskFixture {
	t.Helper()
	f := newAsk(t, caps, stream, modern)
	f.link.DeadlineReached() // its host's request is answered
	return f
}

// newAsk is newJobAsk for a call that is still its host request's (and
// has no asker of its own): its link's DeadlineReached makes it a job of
// the fixture's manager.
func newAsk(t *testing.T, caps string, stream, modern bool) *jobAskFixture {
	t.Helper()
	m := jobstest.Start(t)
	srv := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f := &jobAskFixture{hs: &hostSession{srv: srv, id: "host-1"}, lines: make(chan []byte, 16), end: func() {}}
	f.req = &request{caps: json.RawMessage(caps), modern: modern}
	f.req.asker.hs = f.hs
	f.link = &jobHost{req: f.req}
	host := &askHost{jobHost: f.link}
	f.link.Host = host
	f.req.job.Store(f.link)
	callCtx, callCancel := context.WithCancelCause(context.Background())
	f.link.Jobs = m
	host.ctx, host.cancel = callCtx, callCancel
	if stream {
		f.open()
		f.hs.out = f.conn // a stream connection's (its end is its host's)
	}
	t.Cleanup(func() {
		f.end()
		f.link.End(json.RawMessage(`{}`), nil)
		callCancel(nil)
	})
	return f
}

// job is the job the fixture's call became (its link's), nil before.
func (f *jobAskFixture) job() *jobs.Call { return f.link.JobCall() }

// open opens a stream of the host's: f.lines gets what it writes, f.end
// ends it.
func (f *jobAskFixture) open() {
	q := newHostQueue(nil, nil)
	written := make(chan struct{})
	go func() {
		defer close(written)
		_ = q.Run(func(_ []byte, batch [][]byte) error {
			for _, l := range batch {
				f.lines <- append([]byte(nil), l...)
			}
			return nil
		})
	}()
	f.conn = &connSink{q}
	f.hs.srv.watchLegacy(f.hs, f.conn)
	f.end = func() { f.hs.srv.watchLegacy(f.hs, nil); q.Close(); <-written }
}

const formQ = `{"mode":"form","message":"Go on?"}`

// TestJobAskRefused: a job's question its host cannot take is refused
// with an error that names the job and why; Can says no, so the question
// is never queued for it.
func TestJobAskRefused(t *testing.T) {
	cases := []struct {
		name, caps string
		stream     bool
		modern     bool
		want       string
	}{
		{"host gone", `{"elicitation":{}}`, false, false, "has left, or has no stream open"},
		{"not declared", `{"sampling":{}}`, true, false, "did not declare the capability"},
		{"url mode not declared", `{"elicitation":{}}`, true, false, "did not declare the capability"},
		{"2026-07-28 host", `{"elicitation":{}}`, true, true, "2026-07-28"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newJobAsk(t, c.caps, c.stream, c.modern)
			params := json.RawMessage(formQ)
			if strings.HasPrefix(c.name, "url") {
				params = json.RawMessage(`{"mode":"url","url":"https://example.test"}`)
			}
			if f.link.Can("elicitation/create", params) {
				t.Fatal("Can: true")
			}
			e := f.link.Refusal("elicitation/create", params)
			id := f.job().ID()
			if e == nil || !strings.Contains(e.Message, id) || !strings.Contains(e.Message, c.want) || !strings.Contains(e.Message, "the job goes on") ||
				string(e.Data) != `{"jobId":"`+id+`"}` {
				t.Fatalf("Refusal: %+v, want job %s and %q", e, id, c.want)
			}
			_, err := f.link.Ask(context.Background(), "elicitation/create", params)
			if e2, ok := err.(*jsonrpc.Error); !ok || e2.Message != e.Message {
				t.Fatalf("Ask: %v, want the refusal", err)
			}
		})
	}
}

// TestJobAskForwarded: a job's question goes to its host's stream under
// an id of mcpx's; the host's answer comes back; while it waits, the
// job's progress says so, and after, it is as it was.
func TestJobAskForwarded(t *testing.T) {
	f := newJobAsk(t, `{"elicitation":{}}`, true, false)
	if !f.link.Can("elicitation/create", json.RawMessage(formQ)) || f.link.Refusal("elicitation/create", json.RawMessage(formQ)) != nil {
		t.Fatal("a host with a stream and the capability is refused")
	}
	f.job().SetProgress(jobs.Progress{Progress: 3, Message: "step 3"})
	type out struct {
		res json.RawMessage
		err error
	}
	got := make(chan out, 1)
	go func() {
		res, err := f.link.Ask(context.Background(), "elicitation/create", json.RawMessage(formQ))
		got <- out{res, err}
	}()
	msg, err := jsonrpc.Decode(<-f.lines)
	if err != nil || msg.Method != "elicitation/create" || string(msg.Params) != formQ {
		t.Fatalf("the host got %v %v", msg, err)
	}
	if p, _ := f.job().LastProgress(); p.Message != "waiting for its host to answer elicitation/create" || p.Progress != 3 {
		t.Errorf("progress while it waits: %+v", p)
	}
	f.hs.answer(jsonrpc.NewResult(msg.ID, json.RawMessage(`{"action":"accept","content":{"answer":"teal"}}`)))
	o := <-got
	if o.err != nil || string(o.res) != `{"action":"accept","content":{"answer":"teal"}}` {
		t.Fatalf("Ask: %s %v", o.res, o.err)
	}
	if p, _ := f.job().LastProgress(); p.Message != "step 3" {
		t.Errorf("progress after: %+v", p)
	}
	// A host's error answer goes back as it is.
	go func() {
		res, err := f.link.Ask(context.Background(), "elicitation/create", json.RawMessage(formQ))
		got <- out{res, err}
	}()
	msg, _ = jsonrpc.Decode(<-f.lines)
	f.hs.answer(jsonrpc.NewError(msg.ID, jsonrpc.Errorf(-1, "user said no")))
	if o := <-got; !isRPCError(o.err, "user said no") {
		t.Fatalf("Ask: %v, want the host's error", o.err)
	}
}

// TestJobAskHostLeaves: the host's stream ends while a question waits:
// the question ends with an error naming the job.
func TestJobAskHostLeaves(t *testing.T) {
	f := newJobAsk(t, `{"elicitation":{}}`, true, false)
	got := make(chan error, 1)
	go func() {
		_, err := f.link.Ask(context.Background(), "elicitation/create", json.RawMessage(formQ))
		got <- err
	}()
	<-f.lines
	f.end()
	f.end = func() {}
	err := <-got
	if e, ok := err.(*jsonrpc.Error); !ok || !strings.Contains(e.Message, f.job().ID()) || !strings.Contains(e.Message, "left before it answered") {
		t.Fatalf("Ask: %v", err)
	}
}

// TestJobAskDeadline: a question its host never answers is withdrawn
// after hostjobs.JobAskWait (notifications/cancelled on its stream) and ends with
// an error naming the job.
func TestJobAskDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newJobAsk(t, `{"elicitation":{}}`, true, false)
		start := time.Now()
		_, err := f.link.Ask(context.Background(), "elicitation/create", json.RawMessage(formQ))
		if e, ok := err.(*jsonrpc.Error); !ok || !strings.Contains(e.Message, f.job().ID()) || !strings.Contains(e.Message, "did not answer within 10m0s") {
			t.Fatalf("Ask: %v", err)
		}
		if d := time.Since(start); d != hostjobs.JobAskWait {
			t.Errorf("waited %v, want %v", d, hostjobs.JobAskWait)
		}
		<-f.lines // the question
		if m, _ := jsonrpc.Decode(<-f.lines); m == nil || m.Method != "notifications/cancelled" || !strings.Contains(string(m.Params), f.job().ID()) {
			t.Fatalf("withdrawal: %v", m)
		}
	})
}

// TestJobLogLine: a job's log messages go to its host's stream; a call
// that is still its host request's keeps them (jobLine false), as does a
// request with no link; a 2026-07-28 host's job drops them.
func TestJobLogLine(t *testing.T) {
	f := newJobAsk(t, `{}`, true, false)
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	if !f.link.jobLine(line) {
		t.Fatal("a job's line was left to its answered request")
	}
	if got := <-f.lines; string(got) != string(line) {
		t.Fatalf("stream got %s", got)
	}
	if live := newAsk(t, `{}`, true, false); live.link.jobLine(line) {
		t.Fatal("a live request's line was taken")
	}
	var none *jobHost
	if none.jobLine(line) {
		t.Fatal("no link took a line")
	}
	m := newJobAsk(t, `{}`, true, true)
	if !m.link.jobLine(line) {
		t.Fatal("a 2026-07-28 job's line was left to its answered request")
	}
	select {
	case got := <-m.lines:
		t.Fatalf("a 2026-07-28 host's job sent %s", got)
	default:
	}
}

func isRPCError(err error, msg string) bool {
	e, ok := err.(*jsonrpc.Error)
	return ok && e.Message == msg
}
