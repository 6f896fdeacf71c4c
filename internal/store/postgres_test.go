package store_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// watchCancels runs s.WatchCancels and returns the ids it hears (up to
// buf unread) and its stop, which waits for it (its error fails the test).
func watchCancels(t *testing.T, s *store.Postgres, buf int) (heard <-chan string, stop func()) {
	ids := make(chan string, buf)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.WatchCancels(ctx, func(id, _ string) { ids <- id }) }()
	return ids, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func openPG(t *testing.T, url string) *store.Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPostgresContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPG(t, storetest.PostgresURL(t)) })
}

// Replicas that start at once migrate the schema once: the advisory
// lock makes the others wait and find it done.
func TestPostgresMigrateConcurrently(t *testing.T) {
	url := storetest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := store.OpenPostgres(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := openPG(t, url)
	defer s.Close()
	if _, err := s.List(t.Context(), "", 0); err != nil {
		t.Fatal(err)
	}
}

// A cancel made through one store value (replica B) is heard at once by
// a watcher on another (replica A).
func TestPostgresCancelNotifies(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	heard, stop := watchCancels(t, a, 4)
	defer stop()
	if err := b.Create(t.Context(), &store.Job{ID: "j", Principal: "p", Status: store.Running, Owner: "a"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The watcher may not be listening yet: cancel, and if nothing is
	// heard soon, the catch-up path is not what this tests; so wait until
	// a probe notification comes through first.
	waitListening(t, b, heard)
	if ok, err := b.Cancel(t.Context(), "j", "job cancelled with a test"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	select {
	case id := <-heard:
		if id != "j" {
			t.Fatalf("heard %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancel was not heard")
	}
	// A cancel that changes nothing (the job ended) is not announced.
	if ok, _ := b.Cancel(t.Context(), "j", "again"); ok {
		t.Fatal("cancelled twice")
	}
}

// waitListening cancels probe jobs through s until the watcher hears one.
func waitListening(t *testing.T, s *store.Postgres, heard <-chan string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		id := "probe-" + strings.Repeat("x", i%3) + time.Now().Format("150405.000000")
		if err := s.Create(t.Context(), &store.Job{ID: id, Principal: "p", Status: store.Running, Owner: "a"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Cancel(t.Context(), id, "probe"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher never listened")
		}
	}
}

// A bad URL is refused without echoing it (it may hold a password); an
// unreachable server is an UnavailableError, and so is one that takes the
// connection but does not answer in time (a server too loaded to finish
// its handshake, a partition after the connect): a replica tries again.
func TestPostgresOpenErrors(t *testing.T) {
	_, err := store.OpenPostgres(t.Context(), "postgres://u:secret@[::1")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("bad URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = store.OpenPostgres(ctx, "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2")
	var unavailable *store.UnavailableError
	if !errors.As(err, &unavailable) || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("unreachable server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	_, err = store.OpenPostgres(ctx, "postgres://u:secret@"+ln.Addr().String()+"/db?connect_timeout=1")
	if !errors.As(err, &unavailable) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a server that does not answer: %v", err)
	}
}

// Two gateways share one secret: whoever makes it first, both read it.
func TestPostgresSecret(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	va, err := a.Secret(t.Context(), "seal", func() ([]byte, error) { return []byte("from-a"), nil })
	if err != nil {
		t.Fatal(err)
	}
	vb, err := b.Secret(t.Context(), "seal", func() ([]byte, error) { return []byte("from-b"), nil })
	if err != nil || string(va) != "from-a" || string(vb) != "from-a" {
		t.Fatalf("a %q, b %q, %v", va, vb, err)
	}
}

// A watcher whose connection the server drops (a restart, a failover, an
// administrator's pg_terminate_backend) connects again and still hears a
// cancel made while it was gone: it reads the cancels it missed.
func TestPostgresWatchReconnects(t *testing.T) {
	url := storetest.PostgresURL(t)
	a, b := openPG(t, url), openPG(t, url)
	defer a.Close()
	defer b.Close()
	heard, stop := watchCancels(t, a, 16)
	defer stop()
	waitListening(t, b, heard)
	if err := b.Create(t.Context(), &store.Job{ID: "j", Principal: "p", Status: store.Running, Owner: "a"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	admin := openPG(t, url)
	defer admin.Close()
	n, err := admin.TerminateListeners(t.Context())
	if err != nil || n == 0 {
		t.Fatalf("terminated %d listeners: %v", n, err)
	}
	if ok, err := b.Cancel(t.Context(), "j", "while the watcher was away"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for {
		select {
		case id := <-heard:
			if id == "j" {
				return
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the cancel made while the watcher was away was never heard")
		}
	}
}
