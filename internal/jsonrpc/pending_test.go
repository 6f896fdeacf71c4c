package jsonrpc

import (
	"testing"
)

// TestPending: each request gets its own id; an answer reaches the one it
// names, once; a removed or unknown id takes none.
func TestPending(t *testing.T) {
	var p Pending
	id1, ch1 := p.Add(NewIntID)
	id2, ch2 := p.Add(func(n int64) ID { return NewStringID("q") })
	if id1.String() != "1" || id2.String() != `"q"` {
		t.Fatalf("ids %s, %s; want 1 and \"q\"", id1, id2)
	}
	if !p.Answer(&Message{ID: id2}) {
		t.Fatal("the answer to a waiting request found none")
	}
	if m := <-ch2; m.ID != id2 {
		t.Errorf("request 2 got the answer to %s", m.ID)
	}
	if p.Answer(&Message{ID: id2}) {
		t.Error("a second answer to the same request was taken")
	}
	p.Remove(id1)
	if p.Answer(&Message{ID: id1}) {
		t.Error("an answer to a removed request was taken")
	}
	select {
	case m := <-ch1:
		t.Errorf("a removed request got %v", m)
	default:
	}
	if p.Answer(&Message{ID: NewIntID(99)}) {
		t.Error("an answer to an id never used was taken")
	}
}
