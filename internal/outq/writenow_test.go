package outq

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// stream is a connection that takes, on a write without waiting, a random
// part of what it is given (none, some, all): the kernel's buffer filling
// and draining.
type stream struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	rnd     *rand.Rand
	nowN    int // writes without waiting that took something
	partial int // ... and took only part
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// writeBatch writes a batch as a stream connection's writer does: the
// rest of a line first, then each line with its newline.
func (s *stream) writeBatch(partial []byte, batch [][]byte) error {
	buf := append([]byte(nil), partial...)
	for _, line := range batch {
		buf = append(append(buf, line...), '\n')
	}
	_, err := s.Write(buf)
	return err
}

func (s *stream) WriteNow(p []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	switch s.rnd.IntN(3) {
	case 1:
		n = s.rnd.IntN(len(p))
	case 2:
		n = len(p)
	}
	if n > 0 {
		s.nowN++
	}
	if n > 0 && n < len(p) {
		s.partial++
	}
	s.buf.Write(p[:n])
	return n
}

// TestQueueWriteNow: with pushes writing themselves while the writer is
// idle, in whole or in part, every message arrives whole, once, and in the
// order each goroutine queued its messages; nothing a cancelled request
// queued after it turned dead arrives.
func TestQueueWriteNow(t *testing.T) {
	nowN, partial := 0, 0
	for round := range 20 {
		s := &stream{rnd: rand.New(rand.NewPCG(uint64(round), 7))}
		q := New(Options{WriteNow: s.WriteNow, CoalesceAt: 2 << 20})
		done := make(chan struct{})
		go func() { defer close(done); _ = q.Run(s.writeBatch) }()

		const senders, each = 8, 200
		var wg sync.WaitGroup
		for g := range senders {
			wg.Go(func() {
				for i := range each {
					line := []byte(fmt.Sprintf(`{"g":%d,"i":%d}`, g, i))
					if i%3 == 0 {
						q.PushKeyed(nil, fmt.Sprint(g), line)
					} else {
						q.PushWhile(nil, line)
					}
					if i%50 == 0 {
						time.Sleep(time.Millisecond) // let the writer go idle
					}
				}
				dead := func() bool { return false }
				q.PushWhile(dead, []byte(`{"dead":true}`))
			})
		}
		wg.Wait()
		q.Close()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Fatal("Run did not return")
		}

		next := make([]int, senders)
		out := s.buf.String()
		if !strings.HasSuffix(out, "\n") {
			t.Fatalf("round %d: the stream does not end with a newline: %q", round, out[max(0, len(out)-40):])
		}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var g, i int
			if _, err := fmt.Sscanf(line, `{"g":%d,"i":%d}`, &g, &i); err != nil {
				t.Fatalf("round %d: line %q is not a message whole: %v", round, line, err)
			}
			if i != next[g] {
				t.Fatalf("round %d: sender %d: message %d arrived after %d", round, g, i, next[g]-1)
			}
			next[g]++
		}
		for g, n := range next {
			if n != each {
				t.Fatalf("round %d: sender %d: %d of %d messages arrived", round, g, n, each)
			}
		}
		nowN, partial = nowN+s.nowN, partial+s.partial
	}
	if nowN == 0 || partial == 0 {
		t.Errorf("no push wrote itself (%d), or none in part (%d): the test tests nothing", nowN, partial)
	}
}
