package sock

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// TestNowWriter: on a pipe, the write takes what fits and never waits for
// the reader; what it reports written is what the reader gets.
func TestNowWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	write := NowWriter(w)
	if write == nil {
		t.Fatal("NowWriter(pipe) = nil")
	}
	var sent bytes.Buffer
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1024)
	for i := 0; ; i++ {
		n := write(chunk)
		sent.Write(chunk[:n])
		if n < len(chunk) {
			break // the pipe is full: it did not wait
		}
		if i > 1<<12 {
			t.Fatal("the pipe never filled")
		}
	}
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent.Bytes()) {
		t.Fatalf("the reader got %d bytes, the writes reported %d", len(got), sent.Len())
	}
	if n := write([]byte("x")); n != 0 {
		t.Fatalf("a write to a closed pipe reported %d bytes", n)
	}
}
