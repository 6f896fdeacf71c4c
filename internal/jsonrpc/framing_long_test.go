package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// allocated returns the bytes the heap gave out while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReaderLongLineMemory: a line many times the read buffer (a host's
// connection reads 4 KiB at a time) costs the heap its length once when it
// is within the limit (the line in one buffer) and nothing when it is over
// (read into memory mapped for it), never a buffer regrown step by step;
// and once read, the reader keeps no more than a block of it, and no
// mapping.
func TestReaderLongLineMemory(t *testing.T) {
	const limit = 8 << 20
	for _, tc := range []struct {
		name     string
		n        int     // the line's length
		maxTimes float64 // what reading it may allocate, in times n
		over     bool
	}{
		{"within the limit", 6 << 20, 1.2, false},
		{"over the limit", 12 << 20, 0.05, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := append([]byte(`{"id":3,"x":"`), bytes.Repeat([]byte("x"), tc.n-len(`{"id":3,"x":""}`))...)
			line = append(line, `"}`+"\n{}\n"...)
			r := NewReaderSize(bytes.NewReader(line), limit, 4<<10)
			var got []byte
			var err error
			n := allocated(func() { got, err = r.ReadLine() })
			var over *OversizeError
			switch {
			case tc.over && (!errors.As(err, &over) || over.ID != NewIntID(3)):
				t.Fatalf("got %v, want an oversize error for id 3", err)
			case !tc.over && (err != nil || len(got) != tc.n):
				t.Fatalf("got %d bytes, %v; want the line of %d", len(got), err, tc.n)
			}
			t.Logf("a line of %d bytes: %d bytes allocated", tc.n, n)
			if max := uint64(tc.maxTimes * float64(tc.n)); n > max {
				t.Errorf("reading a line of %d bytes allocated %d bytes, more than %d", tc.n, n, max)
			}
			if r.rest.b != nil {
				t.Error("ReadLine returned with the line's mapping in place")
			}
			if next, err := r.ReadLine(); err != nil || string(next) != "{}" {
				t.Fatalf("the next line: got %q, %v", next, err)
			}
			if held := cap(r.buf); held > 2*blockSize {
				t.Errorf("after the line the reader holds %d bytes of buffers, more than %d", held, 2*blockSize)
			}
		})
	}
}

// TestReaderUnreadLongPartialLine: a stream cut in the middle of a line
// longer than a block hands on all of what was read of it.
func TestReaderUnreadLongPartialLine(t *testing.T) {
	boom := errors.New("boom")
	partial := `{"id":1,"x":"` + strings.Repeat("x", 3*blockSize+5)
	r := NewReaderSize(io.MultiReader(strings.NewReader("{}\n"+partial), iotest.ErrReader(boom)), 0, 4<<10)
	if line, err := r.ReadLine(); err != nil || string(line) != "{}" {
		t.Fatalf("got %q, %v", line, err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reader's error", err)
	}
	if r.rest.b != nil {
		t.Error("ReadLine returned with the line's mapping in place")
	}
	if got := string(r.Unread()); got != partial {
		t.Errorf("Unread: %d bytes, want the %d of the partial line", len(got), len(partial))
	}
}

// TestReaderMappingReused: long lines read one after another, on one
// reader or several, take the same mapping again, kept idle in between;
// the give-back unmaps it.
func TestReaderMappingReused(t *testing.T) {
	idleMaps := func() int {
		idle.Lock()
		defer idle.Unlock()
		return len(idle.maps)
	}
	unmapIdle() // earlier tests' mappings, of other sizes
	line := `{"x":"` + strings.Repeat("x", 3*blockSize) + `"}` + "\n"
	shared := NewReader(strings.NewReader(line+line+line), 0)
	for i := range 6 {
		r := shared
		if i >= 3 {
			r = NewReader(strings.NewReader(line), 0)
		}
		if got, err := r.ReadLine(); err != nil || len(got) != len(line)-1 {
			t.Fatalf("line %d: %d bytes, %v", i, len(got), err)
		}
		// An earlier test's give-back may have unmapped it: 0 or 1.
		if n := idleMaps(); n > 1 {
			t.Fatalf("after line %d: %d idle mappings, want the one line after line took", i, n)
		}
	}
	longLines.free(false)
	if n := idleMaps(); n != 0 {
		t.Errorf("after the give-back: %d idle mappings, want none", n)
	}
}
