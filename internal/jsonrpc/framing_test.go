package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAll reads lines until an error and returns them with that error. Each
// oversize line is recorded as "OVERSIZE id=<id>".
func readAll(t *testing.T, r *Reader) ([]string, error) {
	t.Helper()
	var lines []string
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("ReadLine never reached the end of the stream")
		}
		line, err := r.ReadLine()
		var over *OversizeError
		switch {
		case errors.As(err, &over):
			lines = append(lines, "OVERSIZE id="+over.ID.String())
		case err != nil:
			return lines, err
		default:
			lines = append(lines, string(line))
		}
	}
}

func TestReader(t *testing.T) {
	big := `{"id":1,"x":"` + strings.Repeat("a", 200<<10) + `"}` // beyond the 64 KiB bufio buffer
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"empty stream", "", 0, nil},
		{"only blank lines", "\n\n \t\n\r\n", 0, nil},
		{"one line", "{}\n", 0, []string{"{}"}},
		{"blank lines skipped", "\n\n{\"a\":1}\n   \n\t\n{\"b\":2}\n\n", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"surrounding whitespace trimmed", "  {\"a\":1} \t\r\n", 0, []string{`{"a":1}`}},
		{"final line without newline", "{\"a\":1}\n{\"b\":2}", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"final blank line without newline", "{\"a\":1}\n   ", 0, []string{`{"a":1}`}},
		{"line beyond the bufio buffer", big + "\n{}\n", 0, []string{big, "{}"}},
		{"final line beyond the bufio buffer", "{}\n" + big, 0, []string{"{}", big}},
		{"exactly at the limit", "12345\n", 5, []string{"12345"}},
		{"exactly at the limit without newline", "12345", 5, []string{"12345"}},
		{"one byte over", "123456\n{}\n", 5, []string{"OVERSIZE id=", "{}"}},
		{"one byte over without newline", "{}\n123456", 5, []string{"{}", "OVERSIZE id="}},
		{"over with a readable id", `{"id":42,"params":{}}` + "\n{}\n", 10, []string{"OVERSIZE id=42", "{}"}},
		{"over with a string id", `{"jsonrpc":"2.0","id":"req-1","params":{}}` + "\n{}\n", 30, []string{`OVERSIZE id="req-1"`, "{}"}},
		{"over with the id after the limit", `{"params":{"a":"bcdefghijk"},"id":42}` + "\n{}\n", 10, []string{"OVERSIZE id=42", "{}"}},
		{"over beyond the bufio buffer", big + "\n{}\n", 100 << 10, []string{"OVERSIZE id=1", "{}"}},
		{"over at the end of the stream", "{}\n" + big, 100 << 10, []string{"{}", "OVERSIZE id=1"}},
		{"several over in a row", big + "\n" + big + "\n{}", 1000, []string{"OVERSIZE id=1", "OVERSIZE id=1", "{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "one byte at a time"} {
				var src io.Reader = strings.NewReader(tt.in)
				if mode != "whole" {
					src = iotest.OneByteReader(src)
				}
				got, err := readAll(t, NewReader(src, tt.limit))
				if !errors.Is(err, io.EOF) {
					t.Errorf("%s: got error %v at the end, want io.EOF", mode, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: lines mismatch (-want +got):\n%s", mode, diff)
				}
			}
		})
	}
}

func TestReaderOversizeError(t *testing.T) {
	r := NewReader(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"m","params":{"x":"`+strings.Repeat("y", 100)+`"}}`+"\n"), 64)
	_, err := r.ReadLine()
	var over *OversizeError
	if !errors.As(err, &over) {
		t.Fatalf("got %v, want *OversizeError", err)
	}
	if over.Limit != 64 || over.ID != NewIntID(7) {
		t.Errorf("got %+v, want Limit 64 and ID 7", over)
	}
	if got, want := err.Error(), "message exceeds the limit of 64 bytes"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := r.ReadLine(); !errors.Is(err, io.EOF) {
		t.Errorf("after the oversize line: got %v, want io.EOF", err)
	}
}

func TestReaderDefaultLimit(t *testing.T) {
	for _, limit := range []int{0, -1} {
		if got := NewReader(strings.NewReader(""), limit).limit; got != DefaultMaxMessageBytes {
			t.Errorf("NewReader(_, %d): got limit %d, want %d", limit, got, DefaultMaxMessageBytes)
		}
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("{}\n{\"a\""), iotest.ErrReader(boom)), 0)
	line, err := r.ReadLine()
	if err != nil || string(line) != "{}" {
		t.Fatalf("got %q, %v; want {}", line, err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Errorf("got %v, want the reader's error", err)
	}
	if got := string(r.Unread()); got != `{"a"` {
		t.Errorf("Unread after the error: %q, want the partial line", got)
	}
}

// TestReaderUnreadKeepsLaterBytes: bytes past the partial line that the
// buffer holds are handed on too (a reader that returned data with its
// error).
func TestReaderUnreadKeepsLaterBytes(t *testing.T) {
	boom := errors.New("boom")
	src := iotest.DataErrReader(io.MultiReader(strings.NewReader("{\"x\":1}\n{\"y\""), iotest.ErrReader(boom)))
	r := NewReaderSize(src, 0, 16)
	if line, err := r.ReadLine(); err != nil || string(line) != `{"x":1}` {
		t.Fatalf("got %q, %v", line, err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reader's error", err)
	}
	if got := string(r.Unread()); got != `{"y"` {
		t.Errorf("Unread: %q, want %q", got, `{"y"`)
	}
}

// TestReaderUnreadAfterALine: after a line was returned, Unread gives
// what follows it, never the line again.
func TestReaderUnreadAfterALine(t *testing.T) {
	r := NewReader(strings.NewReader("{\"a\":1}\n{\"b\":2}\n{\"c\""), 0)
	if line, err := r.ReadLine(); err != nil || string(line) != `{"a":1}` {
		t.Fatalf("got %q, %v", line, err)
	}
	if got := string(r.Unread()); got != "{\"b\":2}\n{\"c\"" {
		t.Errorf("Unread after a line: %q", got)
	}
}

func TestPeekID(t *testing.T) {
	tests := []struct {
		in   string
		want ID
	}{
		{`{"id":1,"method":"m"}`, ID{"1"}},
		{`{"id":"abc"`, ID{`"abc"`}},
		{` { "jsonrpc" : "2.0" , "id" : -12 ,`, ID{"-12"}},
		{`{"method":"m","params":{"id":5,"x":[1,2]},"id":9}`, ID{"9"}},
		{`{"id":12345678901234567890,`, ID{"12345678901234567890"}},
		{`{"id":1}`, ID{"1"}},
		{"{\"id\":1\n", ID{"1"}},
		{`{"id":null,"x":1}`, ID{}},
		{`{"id":true,`, ID{}},
		{`{"id":{"a":1},`, ID{}},
		{`{"id":[1],`, ID{}},
		// Truncated input.
		{``, ID{}},
		{`{`, ID{}},
		{`{"i`, ID{}},
		{`{"id"`, ID{}},
		{`{"id":`, ID{}},
		{`{"id":"ab`, ID{}},
		{`{"id":12`, ID{}}, // the number may go on: reading 12 would name another request
		{`{"id":-`, ID{}},
		{`{"params":{"id":5,"x":"`, ID{}},
		{`{"params":{"id":5}`, ID{}},
		// Not an object.
		{`[{"id":1}]`, ID{}},
		{`"id"`, ID{}},
		{`7`, ID{}},
		{`nonsense`, ID{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := PeekID([]byte(tt.in)); got != tt.want {
				t.Errorf("PeekID(%s): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestPeekIDEveryPrefix cuts a message at every byte: PeekID gives either
// the true id or none, never another one.
func TestPeekIDEveryPrefix(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1234567,"method":"tools/call","params":{"id":99}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"id":99,"s":"\"id\":5"},"id":"x\"y"}`,
		`{"id":-0.5e10}`,
	} {
		full := PeekID([]byte(msg))
		if !full.IsValid() {
			t.Fatalf("PeekID(%s) found no id", msg)
		}
		for i := range len(msg) {
			if got := PeekID([]byte(msg[:i])); got.IsValid() && got != full {
				t.Errorf("PeekID(%s): got %q, want %q or none", msg[:i], got, full)
			}
		}
	}
}

// failWriter fails every write after the first n.
type failWriter struct {
	n   int
	err error
	buf bytes.Buffer
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, w.err
	}
	w.n--
	return w.buf.Write(p)
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(NewRequest(NewIntID(1), "ping", nil)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRaw([]byte(`{"jsonrpc":"2.0","method":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(NewResult(NewStringID("a"), []byte(`{"ok":true}`))); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","method":"x"}` + "\n" +
		`{"jsonrpc":"2.0","id":"a","result":{"ok":true}}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriterLargeMessage(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	result := []byte(`"` + strings.Repeat("x", 2<<20) + `"`)
	if err := w.Write(NewResult(NewIntID(1), result)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(NewResult(NewIntID(2), []byte("{}"))); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRaw(result); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3", len(lines))
	}
	if got, want := lines[1], `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if lines[2] != string(result) {
		t.Errorf("WriteRaw of a large line changed it")
	}
}

func TestWriterStickyError(t *testing.T) {
	boom := errors.New("boom")
	fw := &failWriter{n: 1, err: boom}
	w := NewWriter(fw)
	if err := w.WriteRaw([]byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(NewNotification("m", nil)); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
	fw.n = 100 // the writer would now succeed; the Writer must not try
	if err := w.Write(NewNotification("m", nil)); !errors.Is(err, boom) {
		t.Errorf("Write after a failure: got %v, want %v", err, boom)
	}
	if err := w.WriteRaw([]byte("{}")); !errors.Is(err, boom) {
		t.Errorf("WriteRaw after a failure: got %v, want %v", err, boom)
	}
	if got, want := fw.buf.String(), "{}\n"; got != want {
		t.Errorf("got %q written, want %q", got, want)
	}
}

// chunkWriter writes each call's bytes in small pieces, so that two
// concurrent unsynchronised calls would interleave.
type chunkWriter struct{ buf bytes.Buffer }

func (w *chunkWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 7 {
		w.buf.Write(p[i:min(i+7, len(p))])
	}
	return len(p), nil
}

func TestWriterConcurrent(t *testing.T) {
	const goroutines, perGoroutine = 32, 200
	cw := &chunkWriter{}
	w := NewWriter(cw)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				id := NewStringID(fmt.Sprintf("%d-%d", g, i))
				payload := strings.Repeat("p", (g*perGoroutine+i)%500)
				var err error
				if i%2 == 0 {
					err = w.Write(NewResult(id, MustMarshal(payload)))
				} else {
					err = w.WriteRaw(NewResult(id, MustMarshal(payload)).Encode())
				}
				if err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()

	seen := map[string]bool{}
	r := NewReader(&cw.buf, 0)
	for {
		line, err := r.ReadLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(line)
		if err != nil {
			t.Fatalf("line %q is not a whole message: %v", line, err)
		}
		if seen[m.ID.String()] {
			t.Fatalf("id %s written twice", m.ID)
		}
		seen[m.ID.String()] = true
	}
	if got, want := len(seen), goroutines*perGoroutine; got != want {
		t.Errorf("got %d messages, want %d", got, want)
	}
}

// TestReaderUnreadMidOversize: a stream cut in the middle of a line
// already found oversize hands on no part of it (its kept prefix is not
// the line's start as read).
func TestReaderUnreadMidOversize(t *testing.T) {
	boom := errors.New("boom")
	r := NewReaderSize(io.MultiReader(strings.NewReader(`{"id":1,"x":"`+strings.Repeat("x", 100)), iotest.ErrReader(boom)), 32, 16)
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reader's error", err)
	}
	if got := r.Unread(); len(got) != 0 {
		t.Errorf("Unread: %q, want nothing", got)
	}
}
