package upstream

import (
	"testing"
	"time"
)

// TestMalformedLogWindows: the first lines of a window are logged, the
// rest counted; the first line of a later window is logged with the count
// before it, and flush takes what is left.
func TestMalformedLogWindows(t *testing.T) {
	var m malformedLog
	t0 := time.Unix(1000, 0)
	logged := 0
	for i := range 1000 {
		more, log := m.note(t0.Add(time.Duration(i) * time.Millisecond))
		if more != 0 {
			t.Fatalf("line %d said %d more within its window", i, more)
		}
		if log {
			logged++
		}
	}
	if logged != malformedPerWindow {
		t.Fatalf("%d of 1000 lines in a window logged, want %d", logged, malformedPerWindow)
	}
	if more, log := m.note(t0.Add(malformedWindow)); !log || more != 1000-malformedPerWindow {
		t.Fatalf("the next window's first line: log %v, more %d; want true, %d", log, more, 1000-malformedPerWindow)
	}
	for range malformedPerWindow + 5 {
		m.note(t0.Add(malformedWindow + time.Second))
	}
	if n := m.flush(); n != 6 {
		t.Fatalf("flush: %d, want 6", n)
	}
	if n := m.flush(); n != 0 {
		t.Fatalf("a second flush: %d, want 0", n)
	}
}
