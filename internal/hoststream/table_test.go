package hoststream

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// pair maps one table file twice: the writer (the daemon's side) and the
// reader (serve's), as two processes would.
func pair(t *testing.T) (w, r *idTable) {
	t.Helper()
	f, err := createTable()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w, err = mapTable(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	if r, err = mapTable(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); r.Close() })
	return w, r
}

func sorted(ids []string) []string {
	slices.Sort(ids)
	return ids
}

func TestTableSharesPendingIDs(t *testing.T) {
	w, r := pair(t)
	for _, id := range []string{`1`, `"a"`, `2`, `-7`} {
		if err := w.Add(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(`1`); err != nil { // again: a no-op
		t.Fatal(err)
	}
	if !w.Remove(`2`) || w.Remove(`2`) {
		t.Fatal("Remove: want true once, then false")
	}
	if got, want := sorted(r.Pending()), []string{`"a"`, `-7`, `1`}; !slices.Equal(got, want) {
		t.Fatalf("pending as the other side sees it: %q, want %q", got, want)
	}
	if r.Partial() {
		t.Fatal("partial before any write")
	}
	w.SetPartial(true)
	if !r.Partial() {
		t.Fatal("the other side does not see partial")
	}
	w.SetPartial(false)
	if r.Partial() {
		t.Fatal("partial after it was cleared")
	}
}

func TestTableReusesLowSlots(t *testing.T) {
	w, r := pair(t)
	// One call at a time, many times: always slot 0, so the table
	// touches one page however long the host runs.
	for i := range 1000 {
		id := fmt.Sprint(i)
		if err := w.Add(id); err != nil {
			t.Fatal(err)
		}
		if !w.Remove(id) {
			t.Fatal("not removed")
		}
	}
	if w.next != 1 {
		t.Fatalf("%d slots used for one call at a time, want 1", w.next)
	}
	// Freed out of order, reused lowest first.
	for i := range 5 {
		_ = w.Add(fmt.Sprint(i))
	}
	w.Remove("3")
	w.Remove("1")
	_ = w.Add("x")
	if s := w.used["x"]; s != 1 {
		t.Fatalf("x took slot %d, want the lowest free, 1", s)
	}
	if got := len(r.Pending()); got != 4 {
		t.Fatalf("%d pending, want 4", got)
	}
}

func TestTableRefusesWhatDoesNotFit(t *testing.T) {
	w, r := pair(t)
	long := `"` + strings.Repeat("x", maxID-1) + `"`
	if err := w.Add(long); !errors.Is(err, errNoRoom) {
		t.Fatalf("an id of %d bytes: %v, want errNoRoom", len(long), err)
	}
	if err := w.Add(long[1:]); err != nil { // maxID bytes fit
		t.Fatal(err)
	}
	for i := 1; i < slots; i++ {
		if err := w.Add(fmt.Sprint(i)); err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
	}
	if err := w.Add("full"); !errors.Is(err, errNoRoom) {
		t.Fatalf("a full table: %v, want errNoRoom", err)
	}
	got := r.Pending()
	if len(got) != slots || string(got[0]) != long[1:] {
		t.Fatalf("%d pending (first %q), want %d (first the longest id)", len(got), got[0], slots)
	}
}

func TestMapRefusesOtherFiles(t *testing.T) {
	f, err := createTable()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("nope"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := mapTable(int(f.Fd())); err == nil {
		t.Fatal("mapped a file without the magic")
	}
	if err := f.Truncate(tableSize + 1); err != nil {
		t.Fatal(err)
	}
	if _, err := mapTable(int(f.Fd())); err == nil {
		t.Fatal("mapped a file of the wrong size")
	}
}
