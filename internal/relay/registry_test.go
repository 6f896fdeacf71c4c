package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// canceller records the causes its cancel func was called with.
type canceller struct {
	mu     sync.Mutex
	causes []error
}

func (c *canceller) cancel(cause error) {
	c.mu.Lock()
	c.causes = append(c.causes, cause)
	c.mu.Unlock()
}

func (c *canceller) got() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.causes...)
}

func mustAdd(t *testing.T, g *Registry, host HostKey, method string, cancel context.CancelCauseFunc) *Entry {
	t.Helper()
	e, err := g.Add(host, method, cancel)
	if err != nil {
		t.Fatalf("Add(%v): %v", host, err)
	}
	return e
}

func TestRegistryAddRemove(t *testing.T) {
	g := NewRegistry()
	nop := func(error) {}
	a := mustAdd(t, g, HostKey{"s1", "1"}, "tools/call", nop)
	b := mustAdd(t, g, HostKey{"s1", `"1"`}, "tools/call", nop) // the string id "1" is another id
	c := mustAdd(t, g, HostKey{"s2", "1"}, "tools/list", nop)   // same id, other host
	if !(a.ID < b.ID && b.ID < c.ID) {
		t.Errorf("ids %d, %d, %d are not increasing", a.ID, b.ID, c.ID)
	}
	if got := g.Len(); got != 3 {
		t.Errorf("Len() = %d, want 3", got)
	}

	if _, err := g.Add(HostKey{"s1", "1"}, "tools/call", nop); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("Add of an id in flight: got %v, want ErrDuplicateID", err)
	}
	if got := g.Len(); got != 3 {
		t.Errorf("Len() after a refused Add = %d, want 3", got)
	}

	g.Remove(a)
	g.Remove(a) // idempotent
	if got := g.Len(); got != 2 {
		t.Errorf("Len() after Remove = %d, want 2", got)
	}
	a2 := mustAdd(t, g, HostKey{"s1", "1"}, "tools/call", nop) // the id is free again
	if a2.ID == a.ID {
		t.Errorf("a re-added request reused registry id %d", a.ID)
	}
	g.Remove(a) // a stale entry must not remove its successor
	if got := g.Len(); got != 3 {
		t.Errorf("Len() after removing a stale entry = %d, want 3", got)
	}
	if g.CancelHost(HostKey{"s1", "1"}, errors.New("x")) != true {
		t.Error("the successor of a stale entry is no longer registered")
	}
	for _, e := range []*Entry{a2, b, c} {
		g.Remove(e)
	}
	if got := g.Len(); got != 0 {
		t.Errorf("Len() after removing all = %d, want 0", got)
	}
}

func TestRegistryCancel(t *testing.T) {
	cause := &Cause{Kind: HostCancelled, Detail: "stop"}
	tests := []struct {
		name   string
		cancel func(g *Registry, ids map[string]*Entry) int // returns what the call reported, as a count
		want   map[string]int                               // calls of each entry's cancel
		count  int
	}{
		{
			name: "CancelHost hits one",
			cancel: func(g *Registry, _ map[string]*Entry) int {
				return b2i(g.CancelHost(HostKey{"s1", "2"}, cause))
			},
			want: map[string]int{"s1/2": 1}, count: 1,
		},
		{
			name: "CancelHost misses",
			cancel: func(g *Registry, _ map[string]*Entry) int {
				return b2i(g.CancelHost(HostKey{"s3", "2"}, cause))
			},
			want: map[string]int{}, count: 0,
		},
		{
			name: "CancelID hits one",
			cancel: func(g *Registry, ids map[string]*Entry) int {
				return b2i(g.CancelID(ids["s2/1"].ID, cause))
			},
			want: map[string]int{"s2/1": 1}, count: 1,
		},
		{
			name: "CancelID misses",
			cancel: func(g *Registry, _ map[string]*Entry) int {
				return b2i(g.CancelID(12345, cause))
			},
			want: map[string]int{}, count: 0,
		},
		{
			name: "CancelSession hits that session only",
			cancel: func(g *Registry, _ map[string]*Entry) int {
				return g.CancelSession("s1", cause)
			},
			want: map[string]int{"s1/1": 1, "s1/2": 1, "s1/3": 1}, count: 3,
		},
		{
			name: "CancelSession of an unknown session",
			cancel: func(g *Registry, _ map[string]*Entry) int {
				return g.CancelSession("nope", cause)
			},
			want: map[string]int{}, count: 0,
		},
		{
			name: "CancelAll",
			cancel: func(g *Registry, _ map[string]*Entry) int {
				return g.CancelAll(cause)
			},
			want: map[string]int{"s1/1": 1, "s1/2": 1, "s1/3": 1, "s2/1": 1, "s2/2": 1}, count: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewRegistry()
			recs := map[string]*canceller{}
			ids := map[string]*Entry{}
			for _, k := range []HostKey{{"s1", "1"}, {"s1", "2"}, {"s1", "3"}, {"s2", "1"}, {"s2", "2"}} {
				name := k.Session + "/" + k.ID
				recs[name] = &canceller{}
				ids[name] = mustAdd(t, g, k, "tools/call", recs[name].cancel)
			}
			if got := tt.cancel(g, ids); got != tt.count {
				t.Errorf("got count %d, want %d", got, tt.count)
			}
			for name, rec := range recs {
				causes := rec.got()
				if len(causes) != tt.want[name] {
					t.Errorf("%s: cancelled %d times, want %d", name, len(causes), tt.want[name])
				}
				for _, c := range causes {
					if c != cause {
						t.Errorf("%s: cancelled with %v, want %v", name, c, cause)
					}
				}
			}
			if got := g.Len(); got != 5 {
				t.Errorf("Len() after cancelling = %d, want 5 (the owners remove their entries)", got)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRegistryCancelReachesContext checks the cause end to end through a
// real context.
func TestRegistryCancelReachesContext(t *testing.T) {
	g := NewRegistry()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	mustAdd(t, g, HostKey{"s", "1"}, "tools/call", cancel)
	cause := &Cause{Kind: Stopping}
	if n := g.CancelAll(cause); n != 1 {
		t.Fatalf("CancelAll = %d, want 1", n)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context was not cancelled")
	}
	if got := context.Cause(ctx); got != cause {
		t.Errorf("context.Cause = %v, want %v", got, cause)
	}
}

func TestRegistrySnapshot(t *testing.T) {
	g := NewRegistry()
	nop := func(error) {}
	if got := g.Snapshot(); len(got) != 0 {
		t.Errorf("Snapshot of an empty registry = %v, want none", got)
	}
	var entries []*Entry
	for i := range 20 {
		entries = append(entries, mustAdd(t, g, HostKey{"s", fmt.Sprint(i)}, "tools/call", nop))
	}
	g.Remove(entries[3])
	total := 10.0
	entries[5].attach("demo", "slow", 42)
	entries[5].update(1, nil, "")
	entries[5].update(2.5, &total, "half way")
	entries[7].attach("other", "fast", 7)

	snap := g.Snapshot()
	if len(snap) != 19 {
		t.Fatalf("got %d entries, want 19", len(snap))
	}
	for i := 1; i < len(snap); i++ {
		if snap[i-1].ID >= snap[i].ID {
			t.Fatalf("Snapshot is not oldest first: id %d before %d", snap[i-1].ID, snap[i].ID)
		}
	}
	byID := map[uint64]CallStatus{}
	for _, s := range snap {
		byID[s.ID] = s
	}
	if _, ok := byID[entries[3].ID]; ok {
		t.Error("a removed entry is in the snapshot")
	}
	e := entries[5]
	want := CallStatus{
		ID: e.ID, Host: HostKey{"s", "5"}, Method: "tools/call", Server: "demo", Tool: "slow",
		UpstreamID: 42, Started: e.Started, Progress: 2.5, Total: &total, Message: "half way", Updates: 2,
	}
	if diff := cmp.Diff(want, byID[e.ID]); diff != "" {
		t.Errorf("entry 5 mismatch (-want +got):\n%s", diff)
	}
	e = entries[7]
	want = CallStatus{ID: e.ID, Host: HostKey{"s", "7"}, Method: "tools/call", Server: "other", Tool: "fast", UpstreamID: 7, Started: e.Started}
	if diff := cmp.Diff(want, byID[e.ID]); diff != "" {
		t.Errorf("entry 7 mismatch (-want +got):\n%s", diff)
	}
	e = entries[0]
	want = CallStatus{ID: e.ID, Host: HostKey{"s", "0"}, Method: "tools/call", Started: e.Started}
	if diff := cmp.Diff(want, byID[e.ID], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("entry 0 mismatch (-want +got):\n%s", diff)
	}
}

// TestRegistryConcurrent exercises every method at once; run with -race.
func TestRegistryConcurrent(t *testing.T) {
	g := NewRegistry()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			session := fmt.Sprint("s", w%3)
			for i := range 200 {
				e, err := g.Add(HostKey{session, fmt.Sprint(w, "-", i)}, "tools/call", func(error) {})
				if err != nil {
					t.Errorf("Add: %v", err)
					return
				}
				e.attach("srv", "tool", int64(i))
				e.update(float64(i), nil, "m")
				switch i % 4 {
				case 0:
					g.CancelHost(e.Host, &Cause{Kind: HostCancelled})
				case 1:
					g.CancelSession(session, &Cause{Kind: HostDisconnected})
				case 2:
					g.CancelID(e.ID, &Cause{Kind: Stopping})
				case 3:
					_ = g.Snapshot()
				}
				g.Remove(e)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			g.CancelAll(&Cause{Kind: Stopping})
			_ = g.Len()
		}
	})
	wg.Wait()
	if got := g.Len(); got != 0 {
		t.Errorf("Len() = %d, want 0", got)
	}
}

// TestRegistryIntercept: once intercepted, a request's cancels through
// the registry go to the interceptor alone, which decides what still
// reaches the request's context.
func TestRegistryIntercept(t *testing.T) {
	g := NewRegistry()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	e := mustAdd(t, g, HostKey{"s", "1"}, "tools/call", cancel)
	var heard []Kind
	e.Intercept(func(cause error) {
		c, _ := CauseOf(cause)
		heard = append(heard, c.Kind)
		if c.Kind == HostCancelled {
			cancel(cause)
		}
	})
	g.CancelSession("s", &Cause{Kind: HostDisconnected})
	if ctx.Err() != nil {
		t.Fatalf("the session's end reached the intercepted request: %v", context.Cause(ctx))
	}
	g.CancelHost(HostKey{"s", "1"}, &Cause{Kind: HostCancelled})
	if c, _ := CauseOf(context.Cause(ctx)); c == nil || c.Kind != HostCancelled {
		t.Fatalf("cause %v, want the host's cancel", context.Cause(ctx))
	}
	if len(heard) != 2 || heard[0] != HostDisconnected || heard[1] != HostCancelled {
		t.Fatalf("the interceptor heard %v, want the session's end, then the host's cancel", heard)
	}
}

// TestEntryProgress: an entry keeps its call's last progress, and tells
// a listener set later of each one after.
func TestEntryProgress(t *testing.T) {
	g := NewRegistry()
	e := mustAdd(t, g, HostKey{"s", "1"}, "tools/call", func(error) {})
	if _, ok := e.LastProgress(); ok {
		t.Fatal("progress before any")
	}
	total := 4.0
	e.update(1, &total, "one")
	if p, ok := e.LastProgress(); !ok || p.Value != 1 || p.Total == nil || *p.Total != 4 || p.Message != "one" {
		t.Fatalf("LastProgress = %+v, %v", p, ok)
	}
	var got []Progress
	e.OnProgress(func(p Progress) { got = append(got, p) })
	e.update(2, nil, "two")
	if len(got) != 1 || got[0].Value != 2 || got[0].Message != "two" {
		t.Fatalf("the listener heard %+v, want the one progress after it was set", got)
	}
}
