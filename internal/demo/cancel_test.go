package demo

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCancelStopsTool(t *testing.T) {
	for _, meta := range []string{`{"progressToken":"x"}`, modernMeta(`,"progressToken":"x"`)} {
		p := startPeer(t, nil)
		p.send(callReq(`"e1"`, "export", `{"seconds":30,"steps":100}`, meta))
		progressOf(t, p.msg())
		p.send(cancelNote(`"e1"`, "user gave up"))
		if e := p.event(finished(`"e1"`)); e.Outcome != OutcomeCancelled || *e.ElapsedMs > 10_000 {
			t.Errorf("finished event %+v", e)
		}
		// Nothing more for e1: the next response is this one's.
		out := decodeTool(t, p.call("2", callReq("2", "cancellations", `{}`, "")))
		var got struct{ Cancellations []Event }
		if err := json.Unmarshal(out.StructuredContent, &got); err != nil || len(got.Cancellations) != 1 {
			t.Fatalf("cancellations %s (%v)", out.StructuredContent, err)
		}
		c := got.Cancellations[0]
		if string(c.RequestID) != `"e1"` || c.Reason != "user gave up" || !*c.Known || c.Method != "tools/call" ||
			c.Tool != "export" || c.ElapsedMs == nil || c.At == "" || c.Event != EventCancelled {
			t.Errorf("cancellation %+v", c)
		}
		if !strings.HasPrefix(out.text(), `[{"event":"cancelled","requestId":"e1","reason":"user gave up"`) {
			t.Errorf("cancellations text %s", out.text())
		}
		p.close()
	}
}

func TestCancelMatchesRawID(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "wait", `{"seconds":30}`, ""))
	p.send(cancelNote(`"1"`, "a string is not a number"))
	e := p.event(func(e Event) bool { return e.Event == EventCancelled })
	if *e.Known || e.ElapsedMs != nil || e.Method != "" {
		t.Errorf("cancel of \"1\" matched request 1: %+v", e)
	}
	p.send(cancelNote("99", "never sent"))
	if e := p.event(func(e Event) bool { return e.Event == EventCancelled }); *e.Known {
		t.Errorf("cancel of an unknown id: %+v", e)
	}
	p.send(cancelNote("1", "now"))
	if e := p.event(func(e Event) bool { return e.Event == EventCancelled }); !*e.Known || e.Tool != "wait" {
		t.Errorf("cancel of 1: %+v", e)
	}
	if e := p.event(finished("1")); e.Outcome != OutcomeCancelled {
		t.Errorf("wait outcome %q", e.Outcome)
	}
	// A cancel of a finished request is unknown.
	result(t, p.call("3", req("3", "ping", `{}`)))
	p.send(cancelNote("3", "late"))
	if e := p.event(func(e Event) bool { return e.Event == EventCancelled }); *e.Known {
		t.Errorf("late cancel: %+v", e)
	}
}

func TestStubbornAnswersAnyway(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "stubborn", `{"seconds":0.2,"steps":4}`, `{"progressToken":2}`))
	first := progressOf(t, p.msg())
	p.send(cancelNote("1", "stop"))
	notes, m := p.until("1")
	if first.Progress != 1 || len(notes) != 3 {
		t.Errorf("stubborn progress: first %v, then %d more, want 1 then 3", first.Progress, len(notes))
	}
	if out := decodeTool(t, m); out.text() != "stubborn finished all 4 steps although it was cancelled" {
		t.Errorf("stubborn result %+v", out)
	}
	if e := p.event(func(e Event) bool { return e.Event == EventCancelled }); !*e.Known || e.Tool != "stubborn" {
		t.Errorf("stubborn cancellation %+v", e)
	}
	if e := p.event(finished("1")); e.Outcome != OutcomeResult {
		t.Errorf("stubborn outcome %q", e.Outcome)
	}
}
