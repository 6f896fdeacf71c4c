package sock

import (
	"net"
	"os"
	"syscall"
	"testing"
)

func unixPair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestSendFilesCarriesPipes(t *testing.T) {
	a, b := unixPair(t)
	r, w := pipe(t)
	if err := SendFiles(a, int(r.Fd()), int(w.Fd())); err != nil {
		t.Fatal(err)
	}
	fds, err := ReceiveFiles(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	gotR, gotW := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer gotR.Close()
	defer gotW.Close()
	// Written through the received write end, read through the sender's
	// read end: the same pipe.
	if _, err := gotW.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := r.Read(buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read %q, %v through the sender's end", buf, err)
	}
}

func TestReceiveFilesWantsTheCount(t *testing.T) {
	a, b := unixPair(t)
	r, _ := pipe(t)
	if err := SendFiles(a, int(r.Fd())); err != nil {
		t.Fatal(err)
	}
	if _, err := ReceiveFiles(b, 2); err == nil {
		t.Fatal("one descriptor accepted where two were wanted")
	}
	if _, err := a.Write([]byte{0}); err != nil { // a byte without any
		t.Fatal(err)
	}
	if _, err := ReceiveFiles(b, 1); err == nil {
		t.Fatal("a message without descriptors accepted")
	}
}
