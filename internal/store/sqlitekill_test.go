package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/store"
)

// writerEnv names the store file TestSQLiteWriterProcess writes to when
// it runs as the child of TestSQLiteKilledWriting.
const writerEnv = "MCPX_TEST_SQLITE_WRITER"

// TestSQLiteWriterProcess is the child of TestSQLiteKilledWriting: it
// creates and finishes jobs as fast as it can, printing each id once its
// end has committed. Run alone, it does nothing.
func TestSQLiteWriterProcess(t *testing.T) {
	path := os.Getenv(writerEnv)
	if path == "" {
		return
	}
	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; ; i++ {
		id := fmt.Sprint("j", i)
		if err := s.Create(ctx, &store.Job{ID: id, Principal: "p", Status: store.Running, Owner: "o"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Finish(ctx, id, store.Lease{Owner: "o", Attempt: 1}, store.Completed, []byte(`{"n":"`+id+`"}`), ""); !ok || err != nil {
			t.Fatal(ok, err)
		}
		fmt.Println("done", id)
	}
}

// A process writing jobs is killed with SIGKILL mid-write: the store
// opens again (SQLite replays its WAL), passes SQLite's integrity check,
// and holds every job whose end had committed.
func TestSQLiteKilledWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var done []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(done) < 300 {
		if id, ok := strings.CutPrefix(sc.Text(), "done "); ok {
			done = append(done, id)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(done) < 300 {
		t.Fatalf("the writer committed %d jobs before it ended", len(done))
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity check after the kill: %q %v", check, err)
	}
	db.Close()
	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range done {
		j, err := s.Get(context.Background(), "p", id)
		if err != nil || j.Status != store.Completed || string(j.Result) != `{"n":"`+id+`"}` {
			t.Fatalf("job %s, committed before the kill: %+v %v", id, j, err)
		}
	}
	all, _ := s.List(context.Background(), "", 0)
	t.Logf("%d jobs read as committed before the kill, %d rows after it (the writer went on while they were read)", len(done), len(all))
}
