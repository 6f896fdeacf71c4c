package hostserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/hosthttp"
	"mcpx/internal/hostjobs"
	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
)

// newLiveAsk is newJobAsk for a call that is still its host request's:
// its questions go on the request's stream, out (the host's connection,
// if nil), until promote makes it the fixture's job (the link's
// Promote).
func newLiveAsk(t *testing.T, caps string, stream bool, out sink) (f *jobAskFixture, promote func()) {
	t.Helper()
	f = newAsk(t, caps, stream, false)
	if out == nil {
		out = f.conn
	}
	f.req.sink = out
	f.req.asker = hostAsker{hs: f.hs, sink: out, caps: f.req.caps}
	f.link.Asker = &f.req.asker
	return f, f.link.DeadlineReached
}

// asked runs Ask on its own goroutine: its outcome comes on the channel.
func asked(f *jobAskFixture, method string) <-chan error {
	got := make(chan error, 1)
	go func() {
		_, err := f.link.Ask(context.Background(), method, json.RawMessage(formQ))
		got <- err
	}()
	return got
}

// TestJobAskLiveThenHostLeaves: a question put while the call was its
// host request's waits, once the call is a job, as a job's question: the
// job's progress says so, and it ends as soon as the host leaves, naming
// the job (its request no longer ends with its host).
func TestJobAskLiveThenHostLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, promote := newLiveAsk(t, `{"elicitation":{}}`, true, nil)
		got := asked(f, "elicitation/create")
		if m, _ := jsonrpc.Decode(<-f.lines); m == nil || m.Method != "elicitation/create" {
			t.Fatalf("the host got %v", m)
		}
		promote()
		synctest.Wait()
		if p, _ := f.job().LastProgress(); p.Message != "waiting for its host to answer elicitation/create" {
			t.Errorf("progress while it waits as a job's: %+v", p)
		}
		f.end()
		f.end = func() {}
		time.Sleep(time.Minute)
		select {
		case err := <-got:
			if e, ok := err.(*jsonrpc.Error); !ok || !strings.Contains(e.Message, f.job().ID()) || !strings.Contains(e.Message, "left before it answered") {
				t.Fatalf("Ask: %v", err)
			}
		default:
			t.Fatal("still waiting a minute after the host left")
		}
	})
}

// TestJobAskLiveThenDeadline: a question put while live, unanswered once
// the call is a job, is withdrawn hostjobs.JobAskWait after the call became one,
// on the host's stream, and ends with an error naming the job; an answer
// that comes before goes back as a job's does.
func TestJobAskLiveThenDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, promote := newLiveAsk(t, `{"elicitation":{}}`, true, nil)
		got := asked(f, "elicitation/create")
		q, _ := jsonrpc.Decode(<-f.lines)
		time.Sleep(time.Minute)
		promote()
		start := time.Now()
		err := <-got
		if e, ok := err.(*jsonrpc.Error); !ok || !strings.Contains(e.Message, f.job().ID()) || !strings.Contains(e.Message, "did not answer within 10m0s") {
			t.Fatalf("Ask: %v", err)
		}
		if d := time.Since(start); d != hostjobs.JobAskWait {
			t.Errorf("waited %v after the call became a job, want %v", d, hostjobs.JobAskWait)
		}
		if m, _ := jsonrpc.Decode(<-f.lines); m == nil || m.Method != "notifications/cancelled" || !strings.Contains(string(m.Params), string(q.ID.Raw())) {
			t.Fatalf("withdrawal: %v", m)
		}
		if p, moved := f.job().LastProgress(); moved {
			t.Errorf("progress after, for a job that had none: %+v", p)
		}

		got = asked(f, "elicitation/create") // now a job's question, on the same stream
		q, _ = jsonrpc.Decode(<-f.lines)
		f.hs.answer(jsonrpc.NewResult(q.ID, json.RawMessage(`{"action":"decline"}`)))
		if err := <-got; err != nil {
			t.Fatalf("Ask: %v", err)
		}
	})
}

// TestJobAskLiveNoStream: a question put on a legacy HTTP response stream
// (which ends with the job answer) of a host with no stream for mcpx's
// requests fails, naming the job, as the call becomes a job: nothing
// could withdraw it or notice the host leave.
func TestJobAskLiveNoStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := testHTTPSink()
		f, promote := newLiveAsk(t, `{"elicitation":{}}`, false, out)
		got := asked(f, "elicitation/create")
		synctest.Wait()
		promote()
		synctest.Wait()
		select {
		case err := <-got:
			if e, ok := err.(*jsonrpc.Error); !ok || !strings.Contains(e.Message, f.job().ID()) || !strings.Contains(e.Message, "no stream open") {
				t.Fatalf("Ask: %v", err)
			}
		default:
			t.Fatal("still waiting as the call became a job, with no stream to its host")
		}
	})
}

// TestHostAskerStreamEnded: a question whose request's stream has ended
// (an HTTP response stream finished: the call became a job just before)
// fails at once with an error that says so; it never waits for an
// answer the host cannot be asked for.
func TestHostAskerStreamEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := testHTTPSink()
		out.finish()
		a := &hostAsker{hs: &hostSession{srv: &Server{}}, sink: out, caps: json.RawMessage(`{"elicitation":{}}`)}
		_, err := a.Ask(context.Background(), "elicitation/create", json.RawMessage(formQ))
		if err == nil || !strings.Contains(err.Error(), "the stream of the host's request has ended") {
			t.Fatalf("Ask: %v", err)
		}
	})
}

// TestJobAskTwoWaiting: two questions of a job wait at once: its progress
// names the latest while it waits, the other's once only that one does,
// and is what it was once both are answered, in either order; a job that
// had no progress has none after.
func TestJobAskTwoWaiting(t *testing.T) {
	for _, had := range []bool{true, false} {
		for _, firstFirst := range []bool{true, false} {
			f := newJobAsk(t, `{"elicitation":{},"sampling":{}}`, true, false)
			if had {
				f.job().SetProgress(jobs.Progress{Progress: 3, Message: "step 3"})
			}
			first := asked(f, "elicitation/create")
			q1, _ := jsonrpc.Decode(<-f.lines)
			second := asked(f, "sampling/createMessage")
			q2, _ := jsonrpc.Decode(<-f.lines)
			if p, _ := f.job().LastProgress(); p.Message != "waiting for its host to answer sampling/createMessage" {
				t.Errorf("progress while both wait: %+v", p)
			}
			a, b, still := q1, q2, "sampling/createMessage"
			ea, eb := first, second
			if !firstFirst {
				a, b, still, ea, eb = q2, q1, "elicitation/create", second, first
			}
			f.hs.answer(jsonrpc.NewResult(a.ID, json.RawMessage(`{}`)))
			if err := <-ea; err != nil {
				t.Fatal(err)
			}
			if p, _ := f.job().LastProgress(); p.Message != "waiting for its host to answer "+still {
				t.Errorf("progress while %s waits: %+v", still, p)
			}
			f.hs.answer(jsonrpc.NewResult(b.ID, json.RawMessage(`{}`)))
			if err := <-eb; err != nil {
				t.Fatal(err)
			}
			p, moved := f.job().LastProgress()
			if had && (!moved || p.Message != "step 3" || p.Progress != 3) {
				t.Errorf("had %v, first answered first %v: progress after both: %+v %v, want step 3", had, firstFirst, p, moved)
			}
			if !had && moved {
				t.Errorf("first answered first %v: progress after both, for a job that had none: %+v", firstFirst, p)
			}
		}
	}
}

// TestJobAskPlainJSONHost: a call whose host request takes only JSON (no
// asker of its own) asks its host nothing while it is the request's;
// once a job, its questions go to its host's stream like any job's, or
// are refused naming the job.
func TestJobAskPlainJSONHost(t *testing.T) {
	f := newAsk(t, `{"elicitation":{}}`, true, false)
	if f.link.Can("elicitation/create", json.RawMessage(formQ)) || f.link.Refusal("elicitation/create", json.RawMessage(formQ)) != nil {
		t.Fatal("a live call with no asker takes, or refuses as a job, a question")
	}
	if _, err := f.link.Ask(context.Background(), "elicitation/create", json.RawMessage(formQ)); err == nil {
		t.Fatal("a live call with no asker asked its host")
	}
	f.link.Notify("notifications/message", json.RawMessage(`{}`))
	f.link.DeadlineReached()
	if !f.link.Can("elicitation/create", json.RawMessage(formQ)) {
		t.Fatal("a job of a plain JSON host with a stream cannot be asked")
	}
	got := asked(f, "elicitation/create")
	q, _ := jsonrpc.Decode(<-f.lines)
	f.hs.answer(jsonrpc.NewResult(q.ID, json.RawMessage(`{}`)))
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestJobAskStreamReopened: a legacy HTTP session's GET stream ends while
// a job's question waits: the question waits on (the host may open
// another), is put again, under the same id, on the next GET stream, and
// its answer goes back; a question whose session ends fails at once,
// naming the job.
func TestJobAskStreamReopened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newJobAsk(t, `{"elicitation":{}}`, true, false)
		f.hs.out = nil // an HTTP session: its GET stream is f's stream
		got := asked(f, "elicitation/create")
		q, _ := jsonrpc.Decode(<-f.lines)
		f.end()
		time.Sleep(time.Minute)
		select {
		case err := <-got:
			t.Fatalf("Ask ended as the GET stream did: %v", err)
		default:
		}
		f.open()
		again, _ := jsonrpc.Decode(<-f.lines)
		if again == nil || again.Method != "elicitation/create" || again.ID.String() != q.ID.String() {
			t.Fatalf("put again: %v, want the question %s", again, q.ID)
		}
		f.hs.answer(jsonrpc.NewResult(q.ID, json.RawMessage(`{"action":"decline"}`)))
		if err := <-got; err != nil {
			t.Fatalf("Ask: %v", err)
		}

		got = asked(f, "elicitation/create")
		<-f.lines
		f.end()
		f.end = func() {}
		synctest.Wait()
		f.hs.setClosing() // the session ends
		synctest.Wait()
		select {
		case err := <-got:
			if e, ok := err.(*jsonrpc.Error); !ok || !strings.Contains(e.Message, f.job().ID()) || !strings.Contains(e.Message, "session of the host that started it ended") {
				t.Fatalf("Ask: %v", err)
			}
		default:
			t.Fatal("still waiting after the session ended")
		}
	})
}

// TestWatchLegacyUnderSessionLock: watchLegacy runs with the session's
// lock held (initialize makes a stream connection its stream that way),
// and tells a job's question waiting for a stream all the same.
func TestWatchLegacyUnderSessionLock(t *testing.T) {
	srv := &Server{}
	hs := &hostSession{srv: srv, id: "host-1"}
	next := hs.streamNext()
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.mu.Lock()
		defer hs.mu.Unlock()
		srv.watchLegacy(hs, &connSink{newHostQueue(nil, nil)})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("watchLegacy under the session's lock did not return within 10s")
	}
	select {
	case <-next:
	default:
		t.Fatal("a new stream did not tell the question waiting for one")
	}
}

// testHTTPSink is the response stream of a legacy request whose host
// takes neither JSON nor SSE: it carries no request of mcpx's.
func testHTTPSink() httpSink {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", nil)
	return httpSink{hosthttp.NewStream(newHostQueue(nil, nil), httptest.NewRecorder(), r, hosthttp.Accept{})}
}
