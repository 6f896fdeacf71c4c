package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/principal"
)

func TestArgsHashIsCanonical(t *testing.T) {
	a := ArgsHash([]byte(`{"b": 1, "a": [1, 2], "s": "<x>"}`))
	b := ArgsHash([]byte(`{"a":[1,2],"s":"<x>","b":1}`))
	if a != b || len(a) != 64 {
		t.Errorf("the same arguments hash apart: %s, %s", a, b)
	}
	if c := ArgsHash([]byte(`{"a":[2,1],"s":"<x>","b":1}`)); c == a {
		t.Error("other arguments hash alike")
	}
	if got := string(Canonical([]byte(`{ "z" : {"y":true, "x":null} }`))); got != `{"z":{"x":null,"y":true}}` {
		t.Errorf("canonical form %s", got)
	}
}

// run runs l until the test ends.
func run(t *testing.T, l *Log) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readLines(t *testing.T, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// A file that cannot be written (its directory is missing) fails the
// log closed: Failing says why, and its records wait; once the file can
// be written they are, in order, and Failing is nil again.
func TestFailClosedUntilTheFileCanBeWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	path := filepath.Join(dir, "audit.jsonl")
	l := New(Options{Sinks: []Sink{LazyFile(path)}, Retry: 10 * time.Millisecond, Replica: "r1"})
	run(t, l)
	if l.Failing() != nil {
		t.Fatal("failing before any write")
	}
	rec := Record{Kind: KindCall, Server: "demo", Tool: "echo", Outcome: "ok"}
	rec.SetArgs([]byte(`{"text":"secret"}`))
	l.Add(rec)
	eventually(t, "failure", func() bool { return l.Failing() != nil })
	if err := l.Failing(); !strings.Contains(err.Error(), path) {
		t.Errorf("Failing = %v, want it to name the file", err)
	}
	l.Add(Record{Kind: KindJobEnd, Job: "job_1", Outcome: "completed"})
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	eventually(t, "recovery", func() bool { return l.Failing() == nil && l.Stats().Written == 2 })
	got := readLines(t, path)
	if len(got) != 2 || got[0].Kind != KindCall || got[1].Kind != KindJobEnd || got[0].Replica != "r1" {
		t.Fatalf("lines %+v", got)
	}
	if got[0].ArgsSHA256 != ArgsHash([]byte(`{"text":"secret"}`)) {
		t.Errorf("args hash %q", got[0].ArgsSHA256)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("secret")) {
		t.Errorf("the arguments' content is in the log: %s", b)
	}
	if s := l.Stats(); s.Lost != 0 || s.Failures == 0 {
		t.Errorf("stats %+v", s)
	}
}

// A full device fails every write. Failing open, the records are
// counted lost and logged, and nothing is refused; failing closed,
// Failing refuses.
func TestFullDevice(t *testing.T) {
	for _, open := range []bool{true, false} {
		f, err := OpenFile("/dev/full")
		if err != nil {
			t.Skip("no /dev/full:", err)
		}
		var logged syncBuffer
		l := New(Options{Sinks: []Sink{f}, FailOpen: open, Retry: 10 * time.Millisecond, Drain: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		run(t, l)
		l.Add(Record{Kind: KindCall, Outcome: "ok"})
		if open {
			// The count goes up before the line is logged: wait for both.
			eventually(t, "lost record", func() bool {
				return l.Stats().Lost == 1 && strings.Contains(logged.String(), "audit records lost")
			})
			if l.Failing() != nil || !strings.Contains(logged.String(), "audit records lost") || !strings.Contains(logged.String(), "no space left") {
				t.Errorf("failing open: Failing %v, log %q", l.Failing(), logged.String())
			}
		} else {
			eventually(t, "failure", func() bool { return l.Failing() != nil })
			if l.Stats().Lost != 0 || !strings.Contains(l.Failing().Error(), "no space left") {
				t.Errorf("failing closed: %+v, %v", l.Stats(), l.Failing())
			}
		}
		f.Close()
	}
}

// blocked is a sink that takes nothing until released: the writer is
// behind.
type blocked struct {
	release chan struct{}
	mu      sync.Mutex
	got     []Record
}

func (b *blocked) Name() string { return "blocked" }
func (b *blocked) Write(ctx context.Context, recs []Record) error {
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	b.got = append(b.got, recs...)
	b.mu.Unlock()
	return nil
}

// A full queue refuses new operations failing closed, yet keeps the
// record of one already admitted; a refusal's record beyond it is
// dropped and counted. Failing open, any record beyond it is.
func TestFullQueue(t *testing.T) {
	for _, open := range []bool{false, true} {
		sink := &blocked{release: make(chan struct{})}
		l := New(Options{Sinks: []Sink{sink}, Queue: 2, FailOpen: open})
		l.Add(Record{Kind: KindCall, Outcome: "ok"})
		l.Add(Record{Kind: KindCall, Outcome: "ok"})
		if got := l.Failing(); open != (got == nil) || (!open && !errors.Is(got, ErrQueueFull)) {
			t.Errorf("open %v: Failing %v with the queue full", open, got)
		}
		pol := principal.NewPolicy(principal.LocalUser(), nil, "__").WithAuditor(l)
		err := pol.Decide(principal.CallTool, principal.Target{Server: "demo", Tool: "echo"})
		if open != (err == nil) || (!open && !strings.Contains(err.Error(), "the audit log cannot be written")) {
			t.Errorf("open %v: a tool call with the queue full: %v", open, err)
		}
		if err := pol.Decide(principal.CancelJob, principal.Target{ID: "j", Owner: "local"}); err != nil {
			t.Errorf("open %v: a cancel refused: %v", open, err)
		}
		l.Add(Record{Kind: KindRefusal, Outcome: "refused"})
		l.Add(Record{Kind: KindJobEnd, Outcome: "completed"})
		// Failing closed, the refused call's record and the refusal
		// below are dropped; failing open, the refusal and the job's end.
		want := map[bool]int64{false: 3, true: 2}[open]
		if s := l.Stats(); s.Lost != 2 || s.Queued != want {
			t.Errorf("open %v: %+v, want 2 lost, %d queued", open, s, want)
		}
		close(sink.release)
		run(t, l)
		eventually(t, "writes", func() bool { return l.Stats().Queued == 0 })
		if l.Failing() != nil {
			t.Errorf("still failing once written: %v", l.Failing())
		}
	}
}

// The policy records each refusal it decides, and none of what a
// filter asks; failing closed it refuses tool calls, and nothing else.
func TestPolicyRecordsRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := New(Options{Sinks: []Sink{f}})
	run(t, l)
	alice := principal.NamedToken("alice", "t").WithClient("cursor")
	pol := principal.NewPolicy(alice, nil, "__").WithAuditor(l)
	if pol.Decide(principal.Operate, principal.Target{}) == nil {
		t.Fatal("a token's holder may operate the daemon")
	}
	if pol.Decide(principal.ReadJob, principal.Target{ID: "job_9", Owner: "local"}) == nil {
		t.Fatal("a token's holder reads the local user's job")
	}
	if pol.Allows(principal.ReadStatus, principal.Target{}) {
		t.Fatal("Allows allowed the whole status")
	}
	if pol.Decide(principal.CallTool, principal.Target{Server: "demo", Tool: "echo"}) != nil {
		t.Fatal("a tool call refused")
	}
	eventually(t, "records", func() bool { return l.Stats().Written == 2 })
	got := readLines(t, path)
	if len(got) != 2 {
		t.Fatalf("%d lines: %+v", len(got), got)
	}
	op, job := got[0], got[1]
	if op.Kind != KindRefusal || op.Action != "operate the daemon" || op.Outcome != "refused" || op.Principal != alice.ID() ||
		op.Host != "cursor" || op.Face != FaceHTTP || !strings.Contains(op.Detail, "forbidden") {
		t.Errorf("operate refusal %+v", op)
	}
	if job.Outcome != "hidden" || job.Job != "job_9" || job.Action != "read a job" {
		t.Errorf("job refusal %+v", job)
	}
}

// syncBuffer is a bytes.Buffer safe for the writer's log lines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Every operation of the policy table leaves one line when refused,
// naming it.
func TestEveryOperationRefusedLeavesItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := New(Options{Sinks: []Sink{f}})
	run(t, l)
	bob := principal.NamedToken("bob", "b")
	pol := principal.NewPolicy(bob, nil, "__").WithAuditor(l)
	var want []string
	for _, op := range principal.Ops() {
		var target principal.Target
		switch op {
		case principal.CallTool, principal.StartJob:
			pol := principal.NewPolicy(principal.Principal{}, nil, "__").WithAuditor(l) // no one may
			if pol.Decide(op, principal.Target{Server: "demo", Tool: "echo"}) == nil {
				t.Fatalf("no one may %v", op)
			}
			want = append(want, op.String())
			continue
		case principal.ReadJob, principal.CancelJob, principal.ReadCall, principal.CancelCall:
			target = principal.Target{ID: "x", Owner: "local"}
		}
		if pol.Decide(op, target) == nil {
			t.Fatalf("%v: a named token's holder was allowed", op)
		}
		want = append(want, op.String())
	}
	eventually(t, "records", func() bool { return l.Stats().Written == int64(len(want)) })
	var got []string
	for _, r := range readLines(t, path) {
		if r.Kind != KindRefusal {
			t.Errorf("not a refusal: %+v", r)
		}
		got = append(got, r.Action)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("refusals %v, want %v", got, want)
	}
}
