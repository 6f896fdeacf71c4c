package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// A blob written by one gateway reads back on another; deleted, it reads
// as none; too large, it is refused and the old value kept.
func TestPostgresBlobs(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	if v, err := a.Blob(ctx, "x"); v != nil || err != nil {
		t.Fatalf("no blob yet: %q, %v", v, err)
	}
	if err := a.PutBlob(ctx, "x", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Blob(ctx, "x"); string(v) != "one" || err != nil {
		t.Fatalf("read on the other gateway: %q, %v", v, err)
	}
	err := b.PutBlob(ctx, "x", bytes.Repeat([]byte("z"), store.MaxBlobBytes+1))
	if !errors.Is(err, store.ErrBlobTooLarge) {
		t.Fatalf("an oversized blob: %v", err)
	}
	err = b.UpdateBlob(ctx, "x", func([]byte) ([]byte, error) { return bytes.Repeat([]byte("z"), store.MaxBlobBytes+1), nil })
	if !errors.Is(err, store.ErrBlobTooLarge) {
		t.Fatalf("an oversized update: %v", err)
	}
	if v, _ := a.Blob(ctx, "x"); string(v) != "one" {
		t.Fatalf("after refused writes: %q", v)
	}
	if err := b.DeleteBlob(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Blob(ctx, "x"); v != nil || err != nil {
		t.Fatalf("deleted: %q, %v", v, err)
	}
	if err := a.DeleteBlob(ctx, "never"); err != nil {
		t.Fatalf("deleting what is not there: %v", err)
	}
}

// Gateways racing to update one blob each see the value the one before
// wrote: 2 gateways × 20 increments end at 40, none lost. An update whose
// fn fails or returns nil changes nothing.
func TestPostgresUpdateBlobLocks(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for _, s := range []*store.Postgres{a, b} {
		for range 4 {
			wg.Go(func() {
				for range 5 {
					errs <- s.UpdateBlob(ctx, "n", func(cur []byte) ([]byte, error) {
						n := 0
						if cur != nil {
							var err error
							if n, err = strconv.Atoi(string(cur)); err != nil {
								return nil, err
							}
						}
						return []byte(strconv.Itoa(n + 1)), nil
					})
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v, err := a.Blob(ctx, "n"); string(v) != "40" || err != nil {
		t.Fatalf("after 40 racing increments: %q, %v", v, err)
	}
	boom := fmt.Errorf("boom")
	if err := a.UpdateBlob(ctx, "n", func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	if err := a.UpdateBlob(ctx, "n", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.Blob(ctx, "n"); string(v) != "40" {
		t.Fatalf("after a failed and an empty update: %q", v)
	}
}

// BlobNames lists the names under a prefix that hold a value: a deleted
// one, whose row stays as its lock, is not listed; a prefix's LIKE
// wildcards are taken literally.
func TestPostgresBlobNames(t *testing.T) {
	a := openPG(t, storetest.PostgresURL(t))
	defer a.Close()
	ctx := t.Context()
	for _, n := range []string{"p.s~1", "p.s~2", "p.t~1", "p_s~3"} {
		if err := a.PutBlob(ctx, n, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.DeleteBlob(ctx, "p.s~2"); err != nil {
		t.Fatal(err)
	}
	got, err := a.BlobNames(ctx, "p.s~")
	if err != nil || fmt.Sprint(got) != "[p.s~1]" {
		t.Fatalf("names under p.s~: %v %v, want [p.s~1]", got, err)
	}
	if got, err := a.BlobNames(ctx, "p_"); err != nil || fmt.Sprint(got) != "[p_s~3]" {
		t.Fatalf("names under p_: %v %v", got, err)
	}
}
