package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/store"
)

// testFencing: once another owner has claimed a job, every write made
// under the lease it took (progress, renewal, end) changes nothing, and
// so does one under an earlier attempt of the same owner.
func testFencing(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := newJob("j", "alice")
	j.LeaseUntil = time.Now().Add(-time.Second)
	create(t, s, j)
	old := j.Lease()
	if ok, err := s.Claim(ctx, "j", old, "owner-b", -time.Second, 0, "taken"); !ok || err != nil {
		t.Fatalf("Claim: %v %v", ok, err)
	}
	if ok, err := s.SetProgress(ctx, "j", old, []byte(`{"progress":9}`)); ok || err != nil {
		t.Fatalf("progress under a taken lease: %v %v", ok, err)
	}
	if got, err := s.Renew(ctx, "owner-a", []string{"j"}, time.Minute); len(got) != 0 || err != nil {
		t.Fatalf("renewal of a taken lease: %v %v", got, err)
	}
	if ok, err := s.Finish(ctx, "j", old, store.Completed, []byte(`{"stale":1}`), ""); ok || err != nil {
		t.Fatalf("end under a taken lease: %v %v", ok, err)
	}
	// The same owner's earlier attempt is as stale as another owner's.
	second := store.Lease{Owner: "owner-b", Attempt: 2}
	if ok, err := s.Claim(ctx, "j", second, "owner-b", time.Minute, 0, "again"); !ok || err != nil {
		t.Fatalf("Claim of the lapsed second attempt: %v %v", ok, err)
	}
	if ok, _ := s.Finish(ctx, "j", second, store.Completed, []byte(`{"stale":2}`), ""); ok {
		t.Fatal("an earlier attempt of the owner ended the job")
	}
	// A lease that has not lapsed cannot be claimed.
	if ok, _ := s.Claim(ctx, "j", store.Lease{Owner: "owner-b", Attempt: 3}, "owner-c", time.Minute, 0, "early"); ok {
		t.Fatal("a live lease was claimed")
	}
	third := store.Lease{Owner: "owner-b", Attempt: 3}
	if ok, err := s.SetProgress(ctx, "j", third, []byte(`{"progress":1}`)); !ok || err != nil {
		t.Fatalf("the holder's progress: %v %v", ok, err)
	}
	if ok, err := s.Finish(ctx, "j", third, store.Completed, []byte(`{"ok":3}`), ""); !ok || err != nil {
		t.Fatalf("the holder's end: %v %v", ok, err)
	}
	if got := get(t, s, "alice", "j"); string(got.Result) != `{"ok":3}` || string(got.Progress) != `{"progress":1}` || got.Late != nil {
		t.Fatalf("after the holder's end: %+v", got)
	}
}

// testLateEnd: the end of a call whose lease was taken is kept beside
// the job's own end, once, with a note; a lease nobody took has no late
// end to keep.
func testLateEnd(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := newJob("j", "alice")
	j.LeaseUntil = time.Now().Add(-time.Second)
	create(t, s, j)
	old := j.Lease()
	if ok, err := s.KeepLate(ctx, "j", old, store.Completed, []byte(`{}`), "", "x"); ok || err != nil {
		t.Fatalf("a late end under the job's own lease was kept: %v %v", ok, err)
	}
	if ok, _ := s.Claim(ctx, "j", old, "owner-b", time.Minute, 0, ""); !ok {
		t.Fatal("Claim failed")
	}
	if ok, _ := s.Finish(ctx, "j", store.Lease{Owner: "owner-b", Attempt: 2}, store.Interrupted, nil, "its owner lost its lease"); !ok {
		t.Fatal("Finish failed")
	}
	if ok, err := s.KeepLate(ctx, "j", old, store.Completed, []byte(`{"late":1}`), "", "the call ended later"); !ok || err != nil {
		t.Fatalf("KeepLate: %v %v", ok, err)
	}
	if ok, _ := s.KeepLate(ctx, "j", old, store.Failed, nil, "boom", "again"); ok {
		t.Fatal("a second late end replaced the first")
	}
	got := get(t, s, "alice", "j")
	if got.Status != store.Interrupted || got.Late == nil || got.Late.Status != store.Completed ||
		string(got.Late.Result) != `{"late":1}` || got.Late.At.IsZero() || !strings.Contains(got.Note, "the call ended later") {
		t.Fatalf("after the late end: %+v (late %+v)", got, got.Late)
	}
	if l, _ := s.List(ctx, "alice", 0); len(l) != 1 || l[0].Late == nil || l[0].Late.Result != nil {
		t.Fatalf("List: %+v", l)
	}
	if _, err := s.Expire(ctx, -time.Second, 0); err != nil {
		t.Fatal(err)
	}
}

// testStoreClock: a lease is given and compared by the store's clock: a
// job created with a lease of a minute is nobody's orphan, however long
// a caller says it must have lapsed for, until the store's clock says a
// minute has passed; a negative lapsedFor reaches it.
func testStoreClock(t *testing.T, s store.Store) {
	ctx := context.Background()
	before := time.Now()
	if err := s.Create(ctx, newJob("j", "alice"), time.Minute); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, "alice", "j")
	// This machine's clock is the store's in the tests, to a few ms.
	if d := got.LeaseUntil.Sub(before.Add(time.Minute)); d < -time.Second || d > 5*time.Second {
		t.Fatalf("a lease of a minute ends %v from now", got.LeaseUntil.Sub(before))
	}
	if o, _ := s.Orphans(ctx, 0); len(o) != 0 {
		t.Fatalf("a fresh lease is an orphan's: %v", ids(o))
	}
	if o, _ := s.Orphans(ctx, -2*time.Minute); len(o) != 1 {
		t.Fatalf("Orphans(-2m) = %v, want the job", ids(o))
	}
	if ok, _ := s.Claim(ctx, "j", got.Lease(), "owner-b", time.Minute, 0, ""); ok {
		t.Fatal("a live lease was claimed")
	}
}

// testRenewListed: Renew extends only the listed jobs of its owner, and
// says how many.
func testRenewListed(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, id := range []string{"a1", "a2"} {
		j := newJob(id, "alice")
		j.LeaseUntil = time.Now().Add(-time.Second)
		create(t, s, j)
	}
	b := newJob("b1", "alice")
	b.Owner, b.LeaseUntil = "owner-b", time.Now().Add(-time.Second)
	create(t, s, b)
	if got, err := s.Renew(ctx, "owner-a", []string{"a1", "b1", "nope"}, time.Minute); !slices.Equal(got, []string{"a1"}) || err != nil {
		t.Fatalf("Renew = %v, %v, want [a1]", got, err)
	}
	if got, err := s.Renew(ctx, "owner-a", nil, time.Minute); len(got) != 0 || err != nil {
		t.Fatalf("Renew(none) = %v, %v", got, err)
	}
	o, _ := s.Orphans(ctx, 0)
	if len(o) != 2 || o[0].ID == "a1" || o[1].ID == "a1" {
		t.Fatalf("orphans after renewing a1: %v", ids(o))
	}
}
