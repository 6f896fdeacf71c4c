package daemon

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/oauth"
	"mcpx/internal/store/storetest"
)

// A replica's sign-ins and jobs do not share a connection pool: a refresh
// holds its connection (the sign-in row's lock) across its token request,
// and many slow refreshes at once must leave the jobs' store usable
// (leases renewed, progress written).
func TestSlowSignInsLeaveJobsAStore(t *testing.T) {
	url := storetest.PostgresURL(t)
	key := make([]byte, oauth.KeyBytes)
	_, _ = rand.Read(key)
	keyFile := filepath.Join(t.TempDir(), "signin.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Store: url, SignInKey: config.SignInKey{File: keyFile}}
	c := newCore(&Options{Config: cfg, Version: "test"}, nil)
	stop := c.run(t.Context(), &Options{Config: cfg})
	defer stop()
	if c.signIns == nil || c.jobs == nil {
		t.Fatalf("no sign-ins (%v) or no jobs (%v) over the shared store", c.signIns != nil, c.jobs != nil)
	}

	// More refreshes at once than a pool has connections (pgx's default:
	// the larger of 4 and the CPUs), each stuck in its token request.
	poolMax := max(4, runtime.NumCPU())
	release := make(chan struct{})
	var held atomic.Int32
	var done sync.WaitGroup
	for i := range 2 * poolMax {
		done.Go(func() {
			_, _ = c.signIns.Store.Update(t.Context(), fmt.Sprintf("s%d", i), func(*oauth.Record) (*oauth.Record, error) {
				held.Add(1)
				<-release
				return nil, nil
			})
		})
	}
	defer func() { close(release); done.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); held.Load() < int32(poolMax); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d sign-in updates got a connection, want %d", held.Load(), poolMax)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if _, err := c.store.List(ctx, "", 0); err != nil {
		t.Fatalf("the job store while sign-ins hold every connection of a pool: %v", err)
	}
}
