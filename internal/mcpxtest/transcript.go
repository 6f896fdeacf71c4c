package mcpxtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// WireLog returns the lines demo server name has logged so far with
// -wire-log ("< " read, "> " written), without their newlines.
func (e *Env) WireLog(name string) []string {
	e.T.Helper()
	b, err := os.ReadFile(e.WireLogPath(name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.T.Fatal(err)
	}
	return splitLines(b)
}

func splitLines(b []byte) []string {
	var out []string
	for line := range bytes.Lines(b) {
		out = append(out, strings.TrimSuffix(string(line), "\n"))
	}
	return out
}

// ReceivedLines returns the raw lines the host received so far, in order.
func (h *Host) ReceivedLines() []string {
	var out []string
	for _, r := range h.Received() {
		out = append(out, string(r.Raw))
	}
	return out
}

// Transcript is what one conversation put on the wire, one stream per
// direction or link, as a txtar archive whose comment says what the
// conversation shows.
type Transcript struct {
	Header  string // prose, one paragraph or more
	Streams []Stream
}

// Stream is the lines of one direction or link, in wire order.
type Stream struct {
	Name  string
	Lines []string
}

// Format returns the transcript as a txtar archive.
func (tr *Transcript) Format() []byte {
	a := &txtar.Archive{Comment: []byte(strings.TrimSpace(tr.Header) + "\n")}
	for _, s := range tr.Streams {
		var data []byte
		for _, l := range s.Lines {
			data = append(append(data, l...), '\n')
		}
		a.Files = append(a.Files, txtar.File{Name: s.Name, Data: data})
	}
	return txtar.Format(a)
}

var (
	goldenMu      sync.Mutex
	goldenWritten = map[string]bool{}
)

// CheckGolden compares got with the golden file at path, line by line.
// With update set, the first call for a path in this test process writes
// got there instead, and later calls (the same case in another run mode)
// compare with what it wrote, so that both modes must agree.
func CheckGolden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	goldenMu.Lock()
	write := update && !goldenWritten[path]
	if write {
		goldenWritten[path] = true
	}
	goldenMu.Unlock()
	if write {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (regenerate with -update): %v", err)
	}
	if diff := GoldenDiff(want, got); diff != "" {
		t.Errorf("transcript differs from %s (-golden +got); if the change is intended, regenerate with -update:\n%s", path, diff)
	}
}

// GoldenDiff returns a line diff of want and got, "" if they are equal
// byte for byte.
func GoldenDiff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	if d := cmp.Diff(splitLines(want), splitLines(got)); d != "" {
		return d
	}
	return "the files differ in their final newline"
}
