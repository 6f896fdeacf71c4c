package jobs_test

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/store"
)

// counted is a real SQLite store that counts the calls made to it, by
// method, and keeps the ids of each renewal: the seam where a test sees
// what a manager asks of its store.
type counted struct {
	*store.SQLite
	mu      sync.Mutex
	calls   map[string]int
	renewed [][]string
}

func (c *counted) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
}

// total returns how many calls were made, and of which methods.
func (c *counted) total() (int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.calls {
		n += k
	}
	return n, maps.Clone(c.calls)
}

func (c *counted) Create(ctx context.Context, j *store.Job, term time.Duration) error {
	c.count("Create")
	return c.SQLite.Create(ctx, j, term)
}

func (c *counted) Get(ctx context.Context, principal, id string) (*store.Job, error) {
	c.count("Get")
	return c.SQLite.Get(ctx, principal, id)
}

func (c *counted) List(ctx context.Context, principal string, limit int) ([]*store.Job, error) {
	c.count("List")
	return c.SQLite.List(ctx, principal, limit)
}

func (c *counted) FindRunning(ctx context.Context, principal, key string) (*store.Job, error) {
	c.count("FindRunning")
	return c.SQLite.FindRunning(ctx, principal, key)
}

func (c *counted) SetProgress(ctx context.Context, id string, l store.Lease, p []byte) (bool, error) {
	c.count("SetProgress")
	return c.SQLite.SetProgress(ctx, id, l, p)
}

func (c *counted) Finish(ctx context.Context, id string, l store.Lease, to store.Status, result []byte, errText string) (bool, error) {
	c.count("Finish")
	return c.SQLite.Finish(ctx, id, l, to, result, errText)
}

func (c *counted) KeepLate(ctx context.Context, id string, l store.Lease, to store.Status, result []byte, errText, note string) (bool, error) {
	c.count("KeepLate")
	return c.SQLite.KeepLate(ctx, id, l, to, result, errText, note)
}

func (c *counted) Cancel(ctx context.Context, id, why string) (bool, error) {
	c.count("Cancel")
	return c.SQLite.Cancel(ctx, id, why)
}

func (c *counted) Release(ctx context.Context, owner string) error {
	c.count("Release")
	return c.SQLite.Release(ctx, owner)
}

func (c *counted) Renew(ctx context.Context, owner string, ids []string, term time.Duration) ([]string, error) {
	c.mu.Lock()
	c.calls["Renew"]++
	c.renewed = append(c.renewed, slices.Clone(ids))
	c.mu.Unlock()
	return c.SQLite.Renew(ctx, owner, ids, term)
}

func (c *counted) Orphans(ctx context.Context, lapsedFor time.Duration) ([]*store.Job, error) {
	c.count("Orphans")
	return c.SQLite.Orphans(ctx, lapsedFor)
}

func (c *counted) Claim(ctx context.Context, id string, prev store.Lease, self string, term, lapsedFor time.Duration, note string) (bool, error) {
	c.count("Claim")
	return c.SQLite.Claim(ctx, id, prev, self, term, lapsedFor, note)
}

func (c *counted) Expire(ctx context.Context, keep, forget time.Duration) (int, error) {
	c.count("Expire")
	return c.SQLite.Expire(ctx, keep, forget)
}

// quietManager runs a manager over a counted SQLite store until the test
// ends.
func quietManager(t *testing.T, exclusive bool) (*jobs.Manager, *counted) {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	cs := &counted{SQLite: st, calls: map[string]int{}}
	m := jobs.New(jobs.Options{Store: cs, Exclusive: exclusive})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	wait(t, m.Started())
	t.Cleanup(func() {
		cancel()
		<-done
		st.Close()
	})
	return m, cs
}

// A manager that holds the store alone and runs no job leaves the store
// alone: no lease renewal (there is none to renew), no expiry for an
// hour (a 24th of the default retention), and its leases are not taken
// for lost. Once a job starts, its lease is renewed at the next third of
// a term, and once it has ended the manager is quiet again.
func TestIdleManagerLeavesStoreAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, cs := quietManager(t, true)
		synctest.Wait()
		before, _ := cs.total()
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if n, by := cs.total(); n != before {
			t.Fatalf("an idle manager made %d store calls in 30 minutes: %v", n-before, by)
		}
		if l := m.Leases(); l.Lost || l.Err != nil {
			t.Fatalf("an idle manager's leases: %+v", l)
		}
		time.Sleep(31 * time.Minute) // an hour since the start's expiry
		synctest.Wait()
		if n, by := cs.total(); n != before+1 || by["Expire"] != 2 {
			t.Fatalf("in an idle hour: %d store calls, want one expiry: %v", n-before, by)
		}

		gate := make(chan struct{})
		c, err := m.Start(t.Context(), spec("alice"), jobs.Now(func(ctx context.Context, c *jobs.Call) (json.RawMessage, error) {
			select {
			case <-gate:
				return json.RawMessage(`{}`), nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(jobs.DefaultLeaseTerm / 3)
		synctest.Wait()
		cs.mu.Lock()
		renewed := slices.Clone(cs.renewed)
		cs.mu.Unlock()
		if len(renewed) == 0 || !slices.Contains(renewed[len(renewed)-1], c.ID()) {
			t.Fatalf("a third of a term after a job started, its lease was not renewed: %v", renewed)
		}
		close(gate)
		wait(t, c.Done())
		synctest.Wait()
		ended, by := cs.total()
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if n, now := cs.total(); n != ended {
			t.Fatalf("after its job ended, the manager made %d store calls in 30 minutes (%v, then %v)", n-ended, by, now)
		}
	})
}

// A manager that shares its store (replicas, a second daemon on the same
// file) keeps looking for the others' orphans with no job of its own.
func TestSharedManagerKeepsLooking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, cs := quietManager(t, false)
		synctest.Wait()
		_, before := cs.total()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if _, by := cs.total(); by["Orphans"]-before["Orphans"] < 10 {
			t.Fatalf("a shared manager looked for orphans %d times in 5 minutes: %v", by["Orphans"]-before["Orphans"], by)
		}
	})
}
