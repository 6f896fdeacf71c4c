package sock

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestRawPipe: what a raw writer writes, more than a pipe holds, a raw
// reader reads, then io.EOF once the writer closes.
func TestRawPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rr, rw := RawReader(r), RawWriter(w)
	if rr == nil || rw == nil {
		t.Fatal("RawReader or RawWriter of a pipe is nil")
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: the writer waits for room
	done := make(chan error, 1)
	go func() {
		n, err := rw.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		w.Close()
		done <- err
	}()
	got, err := io.ReadAll(rr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, wrote %d", len(got), len(want))
	}
}

// TestRawReaderClose: closing the file ends a Read that waits.
func TestRawReaderClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rr := RawReader(r)
	done := make(chan error, 1)
	go func() {
		_, err := rr.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it wait; the test holds either way
	r.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Read after Close: no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Read")
	}
}

// TestRawWriterDeadline: a write to a full pipe ends at its deadline,
// saying how much it wrote.
func TestRawWriterDeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := RawWriter(w).Write(make([]byte, 4<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= 4<<20 {
		t.Fatalf("Write to a full pipe = %d, %v; want part of it and os.ErrDeadlineExceeded", n, err)
	}
}

// TestRawBlocking: a blocking descriptor gets no raw reader or writer (a
// raw read of it could block the thread with the runtime unaware).
func TestRawBlocking(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	if RawReader(r) != nil || RawWriter(w) != nil {
		t.Fatal("a blocking pipe got a raw reader or writer")
	}
}

// TestRawNoAllocs: a raw Write and Read of a message allocate nothing,
// which is what binding the poller's function once is for.
func TestRawNoAllocs(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rr, rw := RawReader(r), RawWriter(w)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	buf := make([]byte, 256)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := rw.Write(msg); err != nil {
			t.Fatal(err)
		}
		if n, err := io.ReadFull(rr, buf[:len(msg)]); err != nil || n != len(msg) {
			t.Fatal(n, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per raw Write and Read, want 0", allocs)
	}
}
