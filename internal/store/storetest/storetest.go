// Package storetest is the contract every store.Store keeps, as tests:
// each store's own test runs [Run] with a factory of fresh stores.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"mcpx/internal/store"
)

// Run runs the contract tests against stores made by open, one per test.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := map[string]func(*testing.T, store.Store){
		"CreateGet":         testCreateGet,
		"IDErrors":          testIDErrors,
		"FinishOnce":        testFinishOnce,
		"CancelWinsResult":  testCancelWinsResult,
		"Progress":          testProgress,
		"FindRunning":       testFindRunning,
		"ListByPrincipal":   testList,
		"LeaseAndOrphans":   testOrphans,
		"ClaimOnce":         testClaimOnce,
		"Expire":            testExpire,
		"ConcurrentFinish":  testConcurrentFinish,
		"RejectsBadCreates": testBadCreates,
		"ClaimRace":         testClaimRace,
		"CancelWatch":       testCancelWatch,
		"Fencing":           testFencing,
		"LateEnd":           testLateEnd,
		"StoreClock":        testStoreClock,
		"RenewListed":       testRenewListed,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			fn(t, s)
		})
	}
}

func newJob(id, principal string) *store.Job {
	return &store.Job{
		ID: id, Principal: principal, Server: "files", Tool: "export", Key: "k-" + id,
		Params: []byte(`{"name":"export"}`), Status: store.Running, Owner: "owner-a",
		LeaseUntil: time.Now().Add(time.Minute),
	}
}

// lease is owner's lease on a job of its first attempt.
func lease(owner string) store.Lease { return store.Lease{Owner: owner, Attempt: 1} }

// create creates j with a lease that ends at j.LeaseUntil (this
// machine's clock and the store's are one in the tests).
func create(t *testing.T, s store.Store, j *store.Job) {
	t.Helper()
	if err := s.Create(context.Background(), j, time.Until(j.LeaseUntil)); err != nil {
		t.Fatalf("Create(%s): %v", j.ID, err)
	}
}

func get(t *testing.T, s store.Store, principal, id string) *store.Job {
	t.Helper()
	j, err := s.Get(context.Background(), principal, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return j
}

func testCreateGet(t *testing.T, s store.Store) {
	j := newJob("j1", "alice")
	j.Idempotent = true
	create(t, s, j)
	got := get(t, s, "alice", "j1")
	if got.Server != "files" || got.Tool != "export" || string(got.Params) != `{"name":"export"}` || !got.Idempotent ||
		got.Status != store.Running || got.Attempt != 1 || got.Owner != "owner-a" || got.Created.IsZero() {
		t.Fatalf("read back %+v", got)
	}
	if got := get(t, s, "", "j1"); got.Principal != "alice" {
		t.Fatalf("any-principal read: %+v", got)
	}
	if err := s.Create(context.Background(), newJob("j1", "alice"), time.Minute); err == nil {
		t.Fatal("a second job with the same id was created")
	}
}

func testIDErrors(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, newJob("mine", "alice"))
	_, err := s.Get(ctx, "alice", "nope")
	if !errors.Is(err, store.ErrUnknown) {
		t.Fatalf("unknown id: %v", err)
	}
	_, err = s.Get(ctx, "bob", "mine")
	if !errors.Is(err, store.ErrForeign) {
		t.Fatalf("another principal's id: %v", err)
	}
	var idErr *store.IDError
	if !errors.As(err, &idErr) || idErr.ID != "mine" {
		t.Fatalf("error does not name the id: %v", err)
	}
	if ok, err := s.Finish(ctx, "mine", lease("owner-a"), store.Completed, []byte(`{}`), ""); !ok || err != nil {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if _, err := s.Expire(ctx, -time.Second, 0); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, "alice", "mine")
	if !errors.Is(err, store.ErrExpired) {
		t.Fatalf("expired id: %v", err)
	}
	_, err = s.Get(ctx, "bob", "mine")
	if !errors.Is(err, store.ErrForeign) {
		t.Fatalf("another principal's expired id: %v (must not say more than foreign)", err)
	}
}

func testFinishOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, newJob("j", "alice"))
	if ok, err := s.Finish(ctx, "j", lease("owner-b"), store.Completed, []byte(`{"x":1}`), ""); ok || err != nil {
		t.Fatalf("a non-owner finished the job: %v %v", ok, err)
	}
	if ok, err := s.Finish(ctx, "j", lease("owner-a"), store.Completed, []byte(`{"x":1}`), ""); !ok || err != nil {
		t.Fatalf("owner's Finish: %v %v", ok, err)
	}
	if ok, _ := s.Finish(ctx, "j", lease("owner-a"), store.Failed, nil, "late"); ok {
		t.Fatal("a finished job finished again")
	}
	if ok, _ := s.Cancel(ctx, "j", "late cancel"); ok {
		t.Fatal("a finished job was cancelled")
	}
	got := get(t, s, "alice", "j")
	if got.Status != store.Completed || string(got.Result) != `{"x":1}` || got.Finished.IsZero() {
		t.Fatalf("after finish: %+v", got)
	}
	if _, err := s.Finish(ctx, "j", lease("owner-a"), store.Running, nil, ""); err == nil {
		t.Fatal("Finish to running was accepted")
	}
}

func testCancelWinsResult(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, newJob("j", "alice"))
	if ok, err := s.Cancel(ctx, "j", "cancelled with mcpx jobs cancel"); !ok || err != nil {
		t.Fatalf("Cancel: %v %v", ok, err)
	}
	if ok, _ := s.Finish(ctx, "j", lease("owner-a"), store.Completed, []byte(`{}`), ""); ok {
		t.Fatal("a result after the cancel replaced it")
	}
	got := get(t, s, "alice", "j")
	if got.Status != store.Cancelled || got.Error != "cancelled with mcpx jobs cancel" || got.Result != nil {
		t.Fatalf("after cancel: %+v", got)
	}
}

func testProgress(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, newJob("j", "alice"))
	if ok, err := s.SetProgress(ctx, "j", lease("owner-a"), []byte(`{"progress":3}`)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := get(t, s, "alice", "j"); string(got.Progress) != `{"progress":3}` {
		t.Fatalf("progress %s", got.Progress)
	}
	s.Finish(ctx, "j", lease("owner-a"), store.Completed, nil, "")
	if ok, err := s.SetProgress(ctx, "j", lease("owner-a"), []byte(`{"progress":4}`)); ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := get(t, s, "alice", "j"); string(got.Progress) != `{"progress":3}` {
		t.Fatalf("progress after the end changed to %s", got.Progress)
	}
}

func testFindRunning(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := newJob("j", "alice")
	j.Key = "same"
	create(t, s, j)
	if got, err := s.FindRunning(ctx, "alice", "same"); err != nil || got == nil || got.ID != "j" {
		t.Fatalf("FindRunning: %v %v", got, err)
	}
	if got, _ := s.FindRunning(ctx, "bob", "same"); got != nil {
		t.Fatal("another principal's job was found")
	}
	s.Finish(ctx, "j", lease("owner-a"), store.Completed, nil, "")
	if got, _ := s.FindRunning(ctx, "alice", "same"); got != nil {
		t.Fatal("a finished job was found running")
	}
}

func testList(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 3 {
		j := newJob(fmt.Sprint("a", i), "alice")
		j.Created = time.Now().Add(time.Duration(i-3) * time.Second) // read as ages: distinct, in the past
		create(t, s, j)
	}
	create(t, s, newJob("b0", "bob"))
	s.Finish(ctx, "a0", lease("owner-a"), store.Completed, []byte(`{"big":1}`), "")
	got, err := s.List(ctx, "alice", 0)
	if err != nil || len(got) != 3 || got[0].ID != "a2" || got[2].ID != "a0" {
		t.Fatalf("List(alice) = %v, %v", ids(got), err)
	}
	if got[2].Result != nil {
		t.Fatal("List returned a result")
	}
	if all, _ := s.List(ctx, "", 0); len(all) != 4 {
		t.Fatalf("List(all) = %v", ids(all))
	}
	if two, _ := s.List(ctx, "", 2); len(two) != 2 {
		t.Fatalf("List(limit 2) = %v", ids(two))
	}
}

func ids(js []*store.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}

func testOrphans(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	live := newJob("live", "alice")
	create(t, s, live)
	dead := newJob("dead", "alice")
	dead.Owner, dead.LeaseUntil = "owner-dead", now.Add(-time.Second)
	create(t, s, dead)
	got, err := s.Orphans(ctx, 0)
	if err != nil || len(got) != 1 || got[0].ID != "dead" {
		t.Fatalf("Orphans = %v, %v", ids(got), err)
	}
	// A lease that ended less than lapsedFor ago is not an orphan's yet.
	if got, _ := s.Orphans(ctx, time.Minute); len(got) != 0 {
		t.Fatalf("Orphans(lapsed for a minute) = %v", ids(got))
	}
	// Renewing a lease keeps a job out of the orphans.
	if got, err := s.Renew(ctx, "owner-dead", []string{"dead"}, time.Minute); !slices.Equal(got, []string{"dead"}) || err != nil {
		t.Fatal(got, err)
	}
	if got, _ := s.Orphans(ctx, 0); len(got) != 0 {
		t.Fatalf("renewed job is an orphan: %v", ids(got))
	}
	// A released job is an orphan at once.
	if err := s.Release(ctx, "owner-a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Orphans(ctx, time.Minute); len(got) != 1 || got[0].ID != "live" {
		t.Fatalf("released job: %v", ids(got))
	}
}

func testClaimOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := newJob("j", "alice")
	j.Owner, j.LeaseUntil = "owner-dead", time.Now().Add(-time.Second)
	create(t, s, j)
	orphans, _ := s.Orphans(ctx, 0)
	if len(orphans) != 1 {
		t.Fatalf("orphans %v", ids(orphans))
	}
	o := orphans[0]
	var wins int
	for _, who := range []string{"owner-b", "owner-c"} {
		ok, err := s.Claim(ctx, o.ID, o.Lease(), who, time.Minute, 0, "run again")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d owners claimed one orphan", wins)
	}
	got := get(t, s, "alice", "j")
	if got.Owner != "owner-b" || got.Attempt != 2 || got.Note != "run again" {
		t.Fatalf("after claim: %+v", got)
	}
}

func testExpire(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, newJob("old", "alice"))
	create(t, s, newJob("running", "alice"))
	s.Finish(ctx, "old", lease("owner-a"), store.Completed, []byte(`{}`), "")
	n, err := s.Expire(ctx, -time.Second, 0)
	if err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v", n, err)
	}
	if got := get(t, s, "alice", "running"); got.Status != store.Running {
		t.Fatal("a running job expired")
	}
	if all, _ := s.List(ctx, "alice", 0); len(all) != 1 {
		t.Fatalf("List after expiry: %v", ids(all))
	}
	// Forgotten: the id is then unknown.
	if _, err := s.Expire(ctx, -time.Second, -time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "alice", "old"); !errors.Is(err, store.ErrUnknown) {
		t.Fatalf("forgotten id: %v", err)
	}
}

func testConcurrentFinish(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 20
	for i := range n {
		create(t, s, newJob(fmt.Sprint("j", i), "alice"))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := map[string]int{}
	for i := range n {
		for _, how := range []string{"finish", "cancel"} {
			wg.Go(func() {
				id := fmt.Sprint("j", i)
				var ok bool
				var err error
				if how == "finish" {
					ok, err = s.Finish(ctx, id, lease("owner-a"), store.Completed, nil, "")
				} else {
					ok, err = s.Cancel(ctx, id, "race")
				}
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					wins[id]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	for i := range n {
		if id := fmt.Sprint("j", i); wins[id] != 1 {
			t.Errorf("job %s ended %d times", id, wins[id])
		}
	}
}

func testBadCreates(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := newJob("", "alice")
	if err := s.Create(ctx, j, time.Minute); err == nil {
		t.Fatal("a job without an id was created")
	}
	j = newJob("x", "")
	if err := s.Create(ctx, j, time.Minute); err == nil {
		t.Fatal("a job without a principal was created")
	}
	j = newJob("y", "alice")
	j.Status = store.Completed
	if err := s.Create(ctx, j, time.Minute); err == nil {
		t.Fatal("a finished job was created")
	}
}

// testClaimRace: two owners (replicas) find the same orphans at once and
// race to claim each; every orphan goes to exactly one of them, and only
// that one can end it.
func testClaimRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 20
	for i := range n {
		j := newJob(fmt.Sprint("o", i), "alice")
		j.Owner, j.LeaseUntil = "owner-dead", time.Now().Add(-time.Second)
		create(t, s, j)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]string{}
	for _, who := range []string{"owner-b", "owner-c"} {
		wg.Go(func() {
			orphans, err := s.Orphans(ctx, 0)
			if err != nil {
				t.Error(err)
				return
			}
			for _, o := range orphans {
				ok, err := s.Claim(ctx, o.ID, o.Lease(), who, time.Minute, 0, "claimed by "+who)
				if err != nil {
					t.Error(err)
				}
				if !ok {
					continue
				}
				mu.Lock()
				if prev, dup := won[o.ID]; dup {
					t.Errorf("%s claimed by %s and %s", o.ID, prev, who)
				}
				won[o.ID] = who
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(won) != n {
		t.Fatalf("%d of %d orphans claimed", len(won), n)
	}
	for id, who := range won {
		other := "owner-b"
		if who == other {
			other = "owner-c"
		}
		if ok, _ := s.Finish(ctx, id, store.Lease{Owner: other, Attempt: 1}, store.Interrupted, nil, "x"); ok {
			t.Errorf("%s ended by %s, which lost the claim", id, other)
		}
		if ok, err := s.Finish(ctx, id, store.Lease{Owner: who, Attempt: 2}, store.Interrupted, nil, "x"); !ok || err != nil {
			t.Errorf("%s not ended by its claimant %s: %v", id, who, err)
		}
	}
}

// testCancelWatch: a store that tells of cancels tells a watcher of each
// cancel made through it, and of no cancel that changed nothing.
func testCancelWatch(t *testing.T, s store.Store) {
	w, ok := s.(store.CancelWatcher)
	if !ok {
		t.Skip("this store does not tell of cancels")
	}
	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan string, 16)
	done := make(chan error, 1)
	go func() { done <- w.WatchCancels(ctx, func(id, _ string) { heard <- id }) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("WatchCancels did not return after its ctx ended")
		}
	}()
	// The watcher may not listen yet: cancel probes until one is heard.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		id := fmt.Sprint("probe", i)
		create(t, s, newJob(id, "alice"))
		if _, err := s.Cancel(ctx, id, "probe"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no cancel was heard")
			}
			continue
		}
		break
	}
	drain := func() {
		for {
			select {
			case <-heard:
			case <-time.After(100 * time.Millisecond):
				return
			}
		}
	}
	drain()
	create(t, s, newJob("j", "alice"))
	if ok, err := s.Cancel(ctx, "j", "job cancelled with a test"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	select {
	case id := <-heard:
		if id != "j" {
			t.Fatalf("heard %q, want j", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancel was not heard")
	}
	if ok, _ := s.Cancel(ctx, "j", "again"); ok {
		t.Fatal("an ended job was cancelled")
	}
	s.Finish(ctx, "none", lease("owner-a"), store.Completed, nil, "")
	select {
	case id := <-heard:
		t.Fatalf("heard %q of a cancel that changed nothing", id)
	case <-time.After(100 * time.Millisecond):
	}
}
