package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestLogFileRotates: a log written past its size becomes FILE.1 and a new
// FILE begins; neither is ever over the size, and nothing written is lost
// until the rotation after.
func TestLogFileRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	l, err := openLogFile(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	line := append(bytes.Repeat([]byte("x"), 99), '\n')
	for range 25 { // 2500 bytes: two rotations
		if _, err := l.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path + ".1")
	if err != nil {
		t.Fatalf("no rotated log: %v", err)
	}
	if len(cur) != 500 || len(old) != 1000 {
		t.Fatalf("the log holds %d bytes and the rotated one %d, want 500 and 1000", len(cur), len(old))
	}
	// Reopened, it counts what the file already holds.
	l.Close()
	l, err = openLogFile(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		l.Write(line)
	}
	if fi, _ := os.Stat(path); fi.Size() != 100 {
		t.Fatalf("after reopening and writing 600 bytes to 500: %d bytes, want a rotation and 100", fi.Size())
	}
}
