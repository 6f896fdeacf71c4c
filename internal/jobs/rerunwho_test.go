package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// lockedBuffer is a buffer the audit log's writer and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// A job run again after a restart, with no request behind it, is
// recorded with its owner's readable name, groups and host as the store
// kept them when it started, not its ID alone.
func TestRerunRecordsItsOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	h := start(t, path, nil)
	alice := principal.Person("https://idp.example", "alice", "Alice Liddell", []string{"developers", "ops"}).WithClient("claude-code")
	s := spec(alice.ID())
	s.Idempotent, s.Key, s.Who = true, "idem", alice
	c, err := h.m.Start(context.Background(), s, jobs.Later(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := c.Promote(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h.stop()

	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if j, err := st.Get(t.Context(), "", id); err != nil || j.Name != "Alice Liddell" || !slices.Equal(j.Groups, []string{"developers", "ops"}) || j.Client != "claude-code" {
		t.Fatalf("the stored job: %+v, %v", j, err)
	}
	var buf lockedBuffer
	log := audit.New(audit.Options{Sinks: []audit.Sink{audit.NewWriter(&buf)}, Replica: "b"})
	var ranAs principal.Principal
	m := jobs.New(jobs.Options{Store: st, Exclusive: true, Rerun: func(ctx context.Context, j *store.Job, c *jobs.Call) (json.RawMessage, error) {
		ranAs = c.Spec().Who
		return json.RawMessage(`{"again":true}`), nil
	}})
	m.SetAudit(log)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = log.Run(ctx) })
	mctx, mcancel := context.WithCancel(context.Background())
	wg.Go(func() { _ = m.Run(mctx) })
	wait(t, m.Started())
	if j, err := m.Wait(t.Context(), alice.ID(), id, 10*time.Second); err != nil || j.Status != store.Completed {
		t.Fatalf("the job after the restart: %+v, %v", j, err)
	}
	mcancel()
	cancel()
	wg.Wait()
	if ranAs.ID() != alice.ID() || ranAs.Name() != "Alice Liddell" || ranAs.Operator() {
		t.Errorf("the re-run ran as %v (name %q)", ranAs, ranAs.Name())
	}
	var end *audit.Record
	for l := range strings.SplitSeq(strings.TrimSpace(buf.b.String()), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if r.Kind == audit.KindJobEnd && r.Job == id {
			end = &r
		}
	}
	if end == nil {
		t.Fatalf("no job.end record of %s in\n%s", id, buf.b.String())
	}
	if end.Principal != alice.ID() || end.Name != "Alice Liddell" || !slices.Equal(end.Groups, []string{"developers", "ops"}) ||
		end.Host != "claude-code" || end.Face != audit.FaceJob || end.Outcome != "completed" {
		t.Fatalf("the re-run's job.end: %+v", *end)
	}
}
