package hostserver

import (
	"errors"
	"fmt"
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

// startRun runs q.run(write) in a goroutine and returns a func that waits
// for it to return.
func startRun(t *testing.T, q *outQueue, write func([]byte) error) (wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.run(write)
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

func TestOutQueueOrder(t *testing.T) {
	q := newOutQueue()
	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	var want []string
	for i := range 300 {
		line := "m" + strconv.Itoa(i)
		if i%3 == 0 {
			q.pushProgress("tok"+strconv.Itoa(i%2), []byte(line))
		} else {
			q.push([]byte(line))
		}
		want = append(want, line)
	}
	q.close()
	wait()
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
	if q.coalesced != 0 {
		t.Errorf("coalesced %d below the soft limit, want 0", q.coalesced)
	}
}

// TestOutQueueCoalesce fills the queue to its soft limit before anything
// is written: past it, a progress notification replaces the queued one of
// its token where that one stands.
func TestOutQueueCoalesce(t *testing.T) {
	q := newOutQueue()
	var want []string
	q.soft = len("a0") + len("a0'")
	for i := range 100 {
		line := "m" + strconv.Itoa(i)
		q.push([]byte(line))
		want = append(want, line)
		q.soft += len(line)
	}
	// Below the limit progress queues up like anything else.
	q.pushProgress("a", []byte("a0"))
	q.pushProgress("a", []byte("a0'"))
	want = append(want, "a0", "a0'")

	// At the limit.
	q.pushProgress("a", []byte("a1")) // queued, remembered
	q.pushProgress("b", []byte("b1"))
	q.pushProgress("a", []byte("a2")) // replaces a1 in its place
	q.push([]byte("result-a"))        // a's result, after a's progress
	q.pushProgress("b", []byte("b2")) // replaces b1, still before result-a
	q.pushProgress("c", []byte("c1"))
	q.pushProgress("b", []byte("b3"))
	q.push([]byte("result-b"))
	q.push([]byte("other"))
	want = append(want, "a2", "b3", "result-a", "c1", "result-b", "other")

	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	q.close()
	wait()
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
	if q.coalesced != 3 {
		t.Errorf("coalesced = %d, want 3", q.coalesced)
	}
}

// TestOutQueueCoalesceAfterDrain checks that the queue forgets positions it
// has handed to the writer: a token's next progress is queued anew.
func TestOutQueueCoalesceAfterDrain(t *testing.T) {
	const soft = 64
	q := newOutQueue()
	q.soft = soft
	for range soft {
		q.push([]byte("x"))
	}
	q.pushProgress("a", []byte("a1"))

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
		q.push([]byte("y"))
	}
	q.pushProgress("a", []byte("a2"))
	q.pushProgress("a", []byte("a3"))
	q.close()
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

// TestOutQueueProducers runs producers that each send increasing progress
// under their own token and then a result, against a writer held back so
// that the queue passes its soft limit. Each token's progress must arrive
// increasing, its last value must arrive, and the result must come after it.
func TestOutQueueProducers(t *testing.T) {
	const producers, steps = 4, 3000 // 12000 messages: past the soft limit
	q := newOutQueue()
	q.soft = 4096
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
				q.pushProgress(key, fmt.Appendf(nil, "progress %d %d", p, i))
			}
			q.push(fmt.Appendf(nil, "result %d", p))
		})
	}
	wg.Wait()
	close(gate)
	q.close()
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
	if q.coalesced == 0 {
		t.Error("nothing was coalesced; the test did not pass the soft limit")
	}
}

func TestOutQueueCloseDrains(t *testing.T) {
	q := newOutQueue()
	var want []string
	for i := range 100 {
		line := strconv.Itoa(i)
		q.push([]byte(line))
		want = append(want, line)
	}
	q.close()
	q.push([]byte("after close"))
	q.pushProgress("a", []byte("progress after close"))
	q.close() // idempotent

	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	wait()
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("written lines mismatch (-want +got):\n%s", diff)
	}
}

func TestOutQueueCloseEmpty(t *testing.T) {
	q := newOutQueue()
	rec := &recorder{}
	wait := startRun(t, q, rec.write)
	q.close()
	wait()
	if got := rec.got(); len(got) != 0 {
		t.Errorf("got %q written, want nothing", got)
	}
}

func TestOutQueueWriteError(t *testing.T) {
	q := newOutQueue()
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
		q.push([]byte(strconv.Itoa(i)))
	}
	for range 3 { // 0, 1 and the failing 2
		select {
		case <-wrote:
		case <-time.After(deadline):
			t.Fatal("the writer was not called")
		}
	}
	q.push([]byte("later"))
	q.pushProgress("a", []byte("later progress"))
	q.close()
	wait()

	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"0", "1", "2"}, calls); diff != "" {
		t.Errorf("write calls mismatch (-want +got):\n%s", diff)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !errors.Is(q.err, boom) {
		t.Errorf("q.err = %v, want %v", q.err, boom)
	}
}
