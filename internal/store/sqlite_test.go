package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

func openTemp(t *testing.T) store.Store {
	s, err := store.OpenSQLite(filepath.Join(t.TempDir(), "state", store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSQLiteContract(t *testing.T) { storetest.Run(t, openTemp) }

// The file and its WAL are the user's alone: tool arguments and results
// may hold secrets.
func TestSQLiteFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := store.OpenSQLite(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.List(t.Context(), "", 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{store.FileName, store.FileName + "-wal"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir has mode %v", fi.Mode().Perm())
	}
}

// A job written by one open is read by the next: the store outlives the
// process.
func TestSQLiteReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(t.Context(), &store.Job{ID: "j", Principal: "p", Status: store.Running, Owner: "o"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Finish(t.Context(), "j", store.Lease{Owner: "o", Attempt: 1}, store.Completed, []byte(`{"ok":true}`), ""); !ok || err != nil {
		t.Fatal(ok, err)
	}
	s.Close()
	s, err = store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j, err := s.Get(t.Context(), "p", "j")
	if err != nil || string(j.Result) != `{"ok":true}` {
		t.Fatalf("after reopen: %+v %v", j, err)
	}
}

// A file that is not a database is refused with an error naming it.
func TestSQLiteNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	if err := os.WriteFile(path, []byte("this is not a database, it is a text file of some length......................................."), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenSQLite(path)
	if err == nil {
		s.Close()
		t.Fatal("opened a text file as the job store")
	}
	if !filepath.IsAbs(path) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error does not name the file: %v", err)
	}
}
