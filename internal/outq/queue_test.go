package outq

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// deadline bounds every wait in these tests.
const deadline = 10 * time.Second

// recorder is a write func that keeps what it was given.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) write(line []byte) error {
	r.mu.Lock()
	r.lines = append(r.lines, string(line))
	r.mu.Unlock()
	return nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// startRun runs q.Run in a goroutine, handing write one line at a time,
// and returns a func that waits for it to return.
func startRun(t *testing.T, q *Queue, write func([]byte) error) (wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Run(func(partial []byte, batch [][]byte) error {
			if partial != nil {
				return errors.New("a partial line with nothing writing without waiting")
			}
			for _, line := range batch {
				if err := write(line); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	return func() {
		t.Helper()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Fatal("run did not return")
		}
	}
}

func TestQueueOrder(t *testing.T) {
	q := New(Options{})
	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	var want []string
	for i := range 300 {
		line := "m" + strconv.Itoa(i)
		if i%3 == 0 {
			q.PushKeyed(nil, "tok"+strconv.Itoa(i%2), []byte(line))
		} else {
			q.Push([]byte(line))
		}
		want = append(want, line)
	}
	q.Close()
	wait()
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
	if q.Coalesced() != 0 {
		t.Errorf("coalesced %d below the soft limit, want 0", q.Coalesced())
	}
}

// TestQueueCoalesce fills the queue to its soft limit before anything
// is written: past it, a progress notification replaces the queued one of
// its token where that one stands.
func TestQueueCoalesce(t *testing.T) {
	q := New(Options{})
	var want []string
	// Lines count with their newline.
	q.opts.CoalesceAt = len("a0\n") + len("a0'\n")
	for i := range 100 {
		line := "m" + strconv.Itoa(i)
		q.Push([]byte(line))
		want = append(want, line)
		q.opts.CoalesceAt += len(line) + 1
	}
	// Below the limit progress queues up like anything else.
	q.PushKeyed(nil, "a", []byte("a0"))
	q.PushKeyed(nil, "a", []byte("a0'"))
	want = append(want, "a0", "a0'")

	// At the limit.
	q.PushKeyed(nil, "a", []byte("a1")) // queued, remembered
	q.PushKeyed(nil, "b", []byte("b1"))
	q.PushKeyed(nil, "a", []byte("a2")) // replaces a1 in its place
	q.Push([]byte("result-a"))          // a's result, after a's progress
	q.PushKeyed(nil, "b", []byte("b2")) // replaces b1, still before result-a
	q.PushKeyed(nil, "c", []byte("c1"))
	q.PushKeyed(nil, "b", []byte("b3"))
	q.Push([]byte("result-b"))
	q.Push([]byte("other"))
	want = append(want, "a2", "b3", "result-a", "c1", "result-b", "other")

	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	q.Close()
	wait()
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
	if q.Coalesced() != 3 {
		t.Errorf("coalesced = %d, want 3", q.Coalesced())
	}
}

// TestQueueCoalesceAfterDrain checks that the queue forgets positions it
// has handed to the writer: a token's next progress is queued anew.
func TestQueueCoalesceAfterDrain(t *testing.T) {
	const soft = 64
	q := New(Options{})
	q.opts.CoalesceAt = soft
	for range soft {
		q.Push([]byte("x"))
	}
	q.PushKeyed(nil, "a", []byte("a1"))

	written := make(chan string, 2*soft+10)
	release := make(chan struct{})
	wait := startRun(t, q, func(line []byte) error {
		written <- string(line)
		if string(line) == "a1" {
			<-release // hold the writer until the next batch is queued
		}
		return nil
	})
	waitFor(t, written, "a1")
	// The first batch is out of the queue: nothing to coalesce with.
	for range soft {
		q.Push([]byte("y"))
	}
	q.PushKeyed(nil, "a", []byte("a2"))
	q.PushKeyed(nil, "a", []byte("a3"))
	q.Close()
	close(release)
	wait()
	close(written)
	var tail []string
	for line := range written {
		if line != "y" {
			tail = append(tail, line)
		}
	}
	if diff := cmp.Diff([]string{"a3"}, tail); diff != "" {
		t.Errorf("lines after the first batch mismatch (-want +got):\n%s", diff)
	}
}

func waitFor(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("%q was never written", want)
		}
	}
}

// TestQueueProducers runs producers that each send increasing progress
// under their own token and then a result, against a writer held back so
// that the queue passes its soft limit. Each token's progress must arrive
// increasing, its last value must arrive, and the result must come after it.
func TestQueueProducers(t *testing.T) {
	const producers, steps = 4, 3000 // 12000 messages: past the soft limit
	q := New(Options{})
	q.opts.CoalesceAt = 4096
	gate := make(chan struct{})
	rec := &recorder{}
	first := true
	wait := startRun(t, q, func(line []byte) error {
		if first {
			first = false
			select {
			case <-gate:
			case <-time.After(deadline):
				return errors.New("gate never opened")
			}
		}
		return rec.write(line)
	})

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			key := fmt.Sprintf(`"tok-%d"`, p)
			for i := 1; i <= steps; i++ {
				q.PushKeyed(nil, key, fmt.Appendf(nil, "progress %d %d", p, i))
			}
			q.Push(fmt.Appendf(nil, "result %d", p))
		})
	}
	wg.Wait()
	close(gate)
	q.Close()
	wait()

	last := make([]int, producers)
	done := make([]bool, producers)
	for _, line := range rec.got() {
		var p, i int
		switch {
		case strings.HasPrefix(line, "progress"):
			if _, err := fmt.Sscanf(line, "progress %d %d", &p, &i); err != nil {
				t.Fatalf("bad line %q", line)
			}
			if done[p] {
				t.Errorf("producer %d: %q after its result", p, line)
			}
			if i <= last[p] {
				t.Errorf("producer %d: progress %d after %d", p, i, last[p])
			}
			last[p] = i
		case strings.HasPrefix(line, "result"):
			if _, err := fmt.Sscanf(line, "result %d", &p); err != nil {
				t.Fatalf("bad line %q", line)
			}
			if done[p] {
				t.Errorf("producer %d: two results", p)
			}
			done[p] = true
			if last[p] != steps {
				t.Errorf("producer %d: result after progress %d, want after %d", p, last[p], steps)
			}
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	for p := range producers {
		if !done[p] {
			t.Errorf("producer %d: no result", p)
		}
	}
	if q.Coalesced() == 0 {
		t.Error("nothing was coalesced; the test did not pass the soft limit")
	}
}

func TestQueueCloseDrains(t *testing.T) {
	q := New(Options{})
	var want []string
	for i := range 100 {
		line := strconv.Itoa(i)
		q.Push([]byte(line))
		want = append(want, line)
	}
	q.Close()
	q.Push([]byte("after close"))
	q.PushKeyed(nil, "a", []byte("progress after close"))
	q.Close() // idempotent

	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	wait()
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
}

func TestQueueCloseEmpty(t *testing.T) {
	q := New(Options{})
	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	q.Close()
	wait()
	if got := rec.got(); len(got) != 0 {
		t.Errorf("got %q written, want nothing", got)
	}
}

func TestQueueWriteError(t *testing.T) {
	q := New(Options{})
	boom := errors.New("broken pipe")
	var mu sync.Mutex
	var calls []string
	wrote := make(chan struct{}, 100)
	wait := startRun(t, q, func(line []byte) error {
		mu.Lock()
		calls = append(calls, string(line))
		mu.Unlock()
		wrote <- struct{}{}
		if string(line) == "2" {
			return boom
		}
		return nil
	})
	for i := range 5 {
		q.Push([]byte(strconv.Itoa(i)))
	}
	for range 3 { // 0, 1 and the failing 2
		select {
		case <-wrote:
		case <-time.After(deadline):
			t.Fatal("the writer was not called")
		}
	}
	wait() // Run returns with the write's error, without Close
	later := q.Push([]byte("later"))
	laterKeyed := q.PushKeyed(nil, "a", []byte("later progress"))

	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"0", "1", "2"}, calls); diff != "" {
		t.Errorf("write calls mismatch (-want +got):\n%s", diff)
	}
	if !errors.Is(later, boom) || !errors.Is(laterKeyed, boom) {
		t.Errorf("pushes after the failed write: %v, %v; want %v", later, laterKeyed, boom)
	}
}

// TestQueueLimit: the caller's Full decides what a push past the limit
// does; an error fails the queue, and every later push returns it, while
// the writer writes what was queued before.
func TestQueueLimit(t *testing.T) {
	full := errors.New("full")
	var waitingAt int
	q := New(Options{Limit: 10, Full: func(waiting int) error { waitingAt = waiting; return full }})
	for _, line := range []string{"abc", "defg"} { // 4 + 5 bytes framed
		if err := q.Push([]byte(line)); err != nil {
			t.Fatalf("Push(%q) = %v below the limit", line, err)
		}
	}
	if err := q.Push([]byte("h")); !errors.Is(err, full) {
		t.Fatalf("Push past the limit = %v, want %v", err, full)
	}
	if waitingAt != 9 {
		t.Errorf("Full was told %d bytes wait, want 9", waitingAt)
	}
	if err := q.Push(nil); !errors.Is(err, full) {
		t.Errorf("Push after the queue failed = %v, want %v", err, full)
	}
	rec := &recorder{}
	done := make(chan error, 1)
	go func() {
		done <- q.Run(func(_ []byte, batch [][]byte) error {
			for _, line := range batch {
				_ = rec.write(line)
			}
			return nil
		})
	}()
	q.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil: every write succeeded", err)
		}
	case <-time.After(deadline):
		t.Fatal("Run did not return")
	}
	if diff := cmp.Diff([]string{"abc", "defg"}, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}

	// nil from Full queues the line all the same.
	q = New(Options{Limit: 1, Full: func(int) error { return nil }})
	if err := q.Push([]byte("long line")); err != nil {
		t.Errorf("Push past the limit with a Full that allows it = %v", err)
	}
	if err := q.Push([]byte("x")); err != nil {
		t.Errorf("second Push = %v", err)
	}
}

// TestQueueClosed: a push after Close returns os.ErrClosed; Drain returns
// once Run has written what was queued.
func TestQueueClosed(t *testing.T) {
	q := New(Options{})
	if err := q.Push([]byte("last")); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	q.Drain(deadline)
	select {
	case <-q.Done():
	default:
		t.Fatal("Drain returned before Run")
	}
	wait()
	if err := q.Push([]byte("after")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Push after Close = %v, want os.ErrClosed", err)
	}
	if diff := cmp.Diff([]string{"last"}, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
}

// TestWriteStalling: a peer that stops reading fails the write with
// ErrStalled once a write makes no progress for the stall time.
func TestWriteStalling(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	big := make([]byte, 4<<20) // more than any pipe buffer
	// A real pipe's deadline: synctest's clock does not reach the poller.
	err = WriteStalling(w, w, big, 50*time.Millisecond)
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("WriteStalling to a pipe nobody reads = %v, want ErrStalled", err)
	}

	// A reader that keeps up: no error.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	go func() { _, _ = io.Copy(io.Discard, r2); r2.Close() }()
	if err := WriteStalling(w2, w2, big, deadline); err != nil {
		t.Errorf("WriteStalling to a pipe that is read = %v", err)
	}
}

// TestQueuePushBounded: past the limit a bounded push queues nothing and
// returns ErrFull, and the queue carries on: plain pushes still queue,
// and once the writer has written what waited, a bounded push goes again.
// A line that finds the queue empty goes whatever its size.
func TestQueuePushBounded(t *testing.T) {
	q := New(Options{Limit: 10})
	if err := q.PushBounded([]byte("a line longer than the limit")); err != nil {
		t.Fatalf("a bounded push into an empty queue = %v", err)
	}
	if err := q.PushBounded([]byte("b")); !errors.Is(err, ErrFull) {
		t.Fatalf("a bounded push past the limit = %v, want ErrFull", err)
	}
	if err := q.Push([]byte("cancel")); err != nil {
		t.Fatalf("a plain push past the limit = %v, want it queued", err)
	}
	rec := &recorder{}
	done := make(chan error, 1)
	go func() {
		done <- q.Run(func(_ []byte, batch [][]byte) error {
			for _, line := range batch {
				_ = rec.write(line)
			}
			return nil
		})
	}()
	deadlineAt := time.Now().Add(deadline)
	for len(rec.got()) < 2 {
		if time.Now().After(deadlineAt) {
			t.Fatalf("the writer wrote %v", rec.got())
		}
		time.Sleep(time.Millisecond)
	}
	for q.PushBounded([]byte("b")) != nil { // the writer may still be finishing its batch
		if time.Now().After(deadlineAt) {
			t.Fatal("a bounded push is still refused after the queue drained")
		}
		time.Sleep(time.Millisecond)
	}
	q.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if diff := cmp.Diff([]string{"a line longer than the limit", "cancel", "b"}, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
}
