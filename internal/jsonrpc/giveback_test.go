package jsonrpc

import (
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestGiveBackAfterLongLines: a reader that lets go of a line of
// giveBackAt or more has the memory given back a second after the last
// such line, once for a burst of them; shorter lines never.
func TestGiveBackAfterLongLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var freed atomic.Int32
		saved := longLines
		longLines = &giveBack{after: time.Second, free: func(big bool) {
			if big {
				freed.Add(1)
			}
		}}
		defer func() { longLines = saved }()

		long := `{"x":"` + strings.Repeat("x", giveBackAt) + `"}` + "\n"
		short := `{"x":"` + strings.Repeat("x", giveBackAt/2) + `"}` + "\n"
		read := func(in string) {
			r := NewReader(strings.NewReader(in), 0)
			for {
				if _, err := r.ReadLine(); err != nil {
					return
				}
			}
		}
		read(short + short + "{}\n")
		time.Sleep(2 * time.Second)
		if n := freed.Load(); n != 0 {
			t.Fatalf("after lines under %d bytes: memory given back %d times, want none", giveBackAt, n)
		}
		for range 3 { // a burst: a long line every half second
			read(long + "{}\n")
			time.Sleep(500 * time.Millisecond)
			if n := freed.Load(); n != 0 {
				t.Fatalf("during a burst of long lines: memory given back %d times, want none yet", n)
			}
		}
		time.Sleep(600 * time.Millisecond)
		if n := freed.Load(); n != 1 {
			t.Fatalf("a second after the burst's last long line: memory given back %d times, want once", n)
		}
		read(long + "{}\n")
		time.Sleep(2 * time.Second)
		if n := freed.Load(); n != 2 {
			t.Fatalf("after another long line: memory given back %d times in all, want twice", n)
		}
	})
}

// TestGiveBackFrees: the give-back the readers share has the runtime
// collect (and return its free pages) once a long line is let go.
func TestGiveBackFrees(t *testing.T) {
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	r := NewReader(strings.NewReader(`{"x":"`+strings.Repeat("x", giveBackAt)+`"}`+"\n{}\n"), 0)
	for range 2 {
		if _, err := r.ReadLine(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for forced() == before {
		if time.Now().After(deadline) {
			t.Fatal("no collection was forced within 30s of a long line let go")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
