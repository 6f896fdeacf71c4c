package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, in string, limit int) ([]Event, string, error) {
	t.Helper()
	r := NewReader(strings.NewReader(in), limit)
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, r.LastEventID(), err
		}
		out = append(out, *ev)
	}
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		want   []Event
		lastID string
	}{
		{"one message", "data: {\"a\":1}\n\n", []Event{{Type: "message", Data: []byte(`{"a":1}`)}}, ""},
		{"crlf and cr", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []Event{
			{Type: "message", Data: []byte("a")}, {Type: "message", Data: []byte("b")}, {Type: "message", Data: []byte("c")},
		}, ""},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []Event{{Type: "message", Data: []byte("a\nb\n c")}}, ""},
		{"type id retry", "id: 7\nevent: message\nretry: 1500\ndata: x\n\n", []Event{
			{Type: "message", ID: "7", Data: []byte("x"), Retry: 1500 * time.Millisecond, HasRetry: true},
		}, "7"},
		{"priming event is not returned", "id: p1\nretry: 100\ndata: \n\ndata: x\n\n", []Event{
			{Type: "message", ID: "p1", Data: []byte("x"), Retry: 100 * time.Millisecond, HasRetry: true},
		}, "p1"},
		{"comments and unknown fields", ": keepalive\nfoo: bar\ndata: x\n\n", []Event{{Type: "message", Data: []byte("x")}}, ""},
		{"bad retry ignored", "retry: 12a\ndata: x\n\n", []Event{{Type: "message", Data: []byte("x")}}, ""},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", []Event{{Type: "message", Data: []byte("x")}}, ""},
		{"event cut off by EOF is dropped", "data: x\n\ndata: partial\n", []Event{{Type: "message", Data: []byte("x")}}, ""},
		{"BOM", "\ufeffdata: x\n\n", []Event{{Type: "message", Data: []byte("x")}}, ""},
		{"field without colon", "data\n\ndata: y\n\n", []Event{{Type: "message", Data: []byte("y")}}, ""},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\n", []Event{
			{Type: "message", ID: "1", Data: []byte("a")}, {Type: "message", ID: "1", Data: []byte("b")},
		}, "1"},
		// A resumption must not skip the event it never received.
		{"id of an event cut off by EOF does not count", "id: 1\ndata: a\n\nid: 2\ndata: par", []Event{
			{Type: "message", ID: "1", Data: []byte("a")},
		}, "1"},
		{"id of a priming event counts", "id: p1\nretry: 10\ndata: \n\n", nil, "p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, lastID, err := readAll(t, tc.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if lastID != tc.lastID {
				t.Errorf("last id = %q, want %q", lastID, tc.lastID)
			}
		})
	}
}

func TestReaderRetry(t *testing.T) {
	r := NewReader(strings.NewReader("id: p\nretry: 250\ndata: \n\n"), 0)
	if _, ok := r.Retry(); ok {
		t.Fatal("Retry reported a delay before any was read")
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if d, ok := r.Retry(); !ok || d != 250*time.Millisecond {
		t.Errorf("Retry() = %v, %v; want 250ms, true", d, ok)
	}
}

func TestReaderLimit(t *testing.T) {
	_, _, err := readAll(t, "data: "+strings.Repeat("x", 100)+"\n\n", 50)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	_, _, err = readAll(t, strings.Repeat("data: xxxxxxxxxx\n", 10)+"\n", 50)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("multi-line: err = %v, want ErrTooLarge", err)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteRetry(&buf, "e0", 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := WriteComment(&buf, "keep\nalive"); err != nil {
		t.Fatal(err)
	}
	msgs := [][]byte{[]byte(`{"jsonrpc":"2.0","method":"x"}`), []byte("line1\nline2\r\nline3"), []byte(" leading space")}
	for i, m := range msgs {
		if err := WriteEvent(&buf, "e"+string(rune('1'+i)), "message", m); err != nil {
			t.Fatal(err)
		}
	}
	got, lastID, err := readAll(t, buf.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"jsonrpc":"2.0","method":"x"}`, "line1\nline2\nline3", " leading space"}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %q", len(got), len(want), buf.String())
	}
	for i := range want {
		if string(got[i].Data) != want[i] {
			t.Errorf("event %d data = %q, want %q", i, got[i].Data, want[i])
		}
		if got[i].Retry != 250*time.Millisecond {
			t.Errorf("event %d retry = %v, want 250ms", i, got[i].Retry)
		}
	}
	if lastID != "e3" {
		t.Errorf("last id = %q, want e3", lastID)
	}
	if err := WriteEvent(&buf, "bad\nid", "", nil); err == nil {
		t.Error("WriteEvent accepted an id with a newline")
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("id: 1\nretry: 10\ndata: a\ndata: b\n\n: c\n\r\n"), 64)
	f.Add([]byte("\ufeffdata\rdata: x\r\n\n"), 8)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit <= 0 || limit > 1<<16 {
			limit = 1 << 16
		}
		r := NewReader(bytes.NewReader(in), limit)
		for i := 0; i < len(in)+1; i++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) == 0 || len(ev.Data) > limit {
				t.Fatalf("event data of %d bytes with limit %d", len(ev.Data), limit)
			}
		}
		t.Fatal("Next did not end")
	})
}

// Lines longer than the read buffer, and terminators split across reads,
// read as whole lines.
func TestReaderLongLinesInPieces(t *testing.T) {
	long := strings.Repeat("x", 70000)
	in := "data: " + long[:5000] + "\r" + "data: " + long + "\r\n\r\n" + "id: 9\rdata: y\n\n"
	for name, rd := range map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
	} {
		r := NewReader(rd(strings.NewReader(in)), 0)
		var got []string
		for {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%s: %v", name, err)
				}
				break
			}
			got = append(got, ev.ID+"|"+string(ev.Data))
		}
		if diff := cmp.Diff([]string{"|" + long[:5000] + "\n" + long, "9|y"}, got); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", name, diff)
		}
	}
}

// A line may be 16 bytes longer than the limit on an event's data.
func TestReaderLineLimit(t *testing.T) {
	const limit = 5000
	for _, tc := range []struct {
		n       int
		tooLong bool
	}{{limit + 16, false}, {limit + 17, true}} {
		in := strings.Repeat(":", tc.n) + "\ndata: x\n\n"
		for name, rd := range map[string]func(io.Reader) io.Reader{
			"whole":    func(r io.Reader) io.Reader { return r },
			"one byte": iotest.OneByteReader,
		} {
			_, err := NewReader(rd(strings.NewReader(in)), limit).Next()
			if tooLong := errors.Is(err, ErrTooLarge); tooLong != tc.tooLong || (!tooLong && err != nil) {
				t.Errorf("%s: a line of %d bytes with limit %d: err = %v", name, tc.n, limit, err)
			}
		}
	}
}
