package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"mcpx/internal/bridge"
	"mcpx/internal/jobs"
	"mcpx/internal/relay"
	"mcpx/internal/sock"
	"mcpx/internal/store"
)

// sealKeyName names the shared requestState key in the store.
const sealKeyName = "relay.requestState.key"

// openTimeout bounds the wait for a shared store's server at start.
const openTimeout = 15 * time.Second

// openJobs opens the job store of opts.Files, if it names one, and makes
// c's job manager over it. The daemon that holds the store's lock is its
// only user that may close every other owner's running jobs at start (a
// kill -9 leaves them behind); one that cannot take it goes by leases. A
// store that cannot be opened leaves c without jobs, and says why; a
// shared one whose server does not answer is tried again until it does
// (pendingStore), and c takes jobs then.
//
// A config that names a shared store (PostgreSQL) makes this gateway a
// replica: it never holds the store alone, so it goes by leases, and it
// hears the others' cancels.
func (c *core) openJobs(opts *Options, r *relay.Relay, obs jobs.Observer, log *slog.Logger) {
	cfg := opts.Config.Jobs
	if opts.LookOnly {
		return
	}
	if url := opts.Config.Store; url != "" {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		var st store.Store
		pg, err := store.OpenPostgres(ctx, url)
		switch {
		case err == nil:
			log.Info("job store: PostgreSQL, shared with other replicas", "store", store.Redact(url))
			shareSealKey(ctx, pg, c.bridge, log)
			st = pg
		case retryable(err):
			// Serve what needs no store meanwhile; take jobs once it answers.
			log.Error("no jobs yet: opening the shared job store failed; trying again", "store", store.Redact(url), "err", err)
			st = newPendingStore(url, err, log, func(pg *store.Postgres) {
				ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
				defer cancel()
				shareSealKey(ctx, pg, c.bridge, log)
			})
		default:
			log.Error("no jobs: opening the shared job store failed", "store", store.Redact(url), "err", err)
			return
		}
		c.store = st
		host, _ := os.Hostname()
		c.jobs = jobs.New(jobs.Options{
			Store: st, Rerun: jobs.RelayRunner(r), Logger: log, LeaseTerm: cfg.LeaseTerm,
			Retention: cfg.Retention, MaxResultBytes: int64(cfg.MaxResultBytes), Observer: obs,
			Replica: &store.Replica{Address: opts.httpAddr, Host: host, PID: os.Getpid(), Version: opts.Version},
		})
		return
	}
	if opts.Files.Jobs == "" {
		return
	}
	st, err := store.OpenSQLite(opts.Files.Jobs)
	if err != nil {
		log.Error("no jobs: opening the job store failed", "err", err)
		return
	}
	exclusive := false
	if opts.Files.JobsLock != "" {
		unlock, err := sock.Lock(opts.Files.JobsLock)
		switch {
		case err == nil:
			c.unlock, exclusive = func() { _ = unlock() }, true
		case !errors.Is(err, sock.ErrLocked):
			log.Warn("locking the job store", "err", err)
		}
	}
	c.store = st
	c.jobs = jobs.New(jobs.Options{
		Store: st, Rerun: jobs.RelayRunner(r), Exclusive: exclusive, Logger: log, LeaseTerm: cfg.LeaseTerm,
		Retention: cfg.Retention, MaxResultBytes: int64(cfg.MaxResultBytes), Observer: obs,
	})
}

// shareSealKey sets b's requestState key to the one every replica of st
// uses: a retry sealed by one opens on another.
func shareSealKey(ctx context.Context, st store.Secrets, b *bridge.Bridge, log *slog.Logger) {
	key, err := st.Secret(ctx, sealKeyName, func() ([]byte, error) { return bridge.NewSealKey(), nil })
	if err == nil {
		err = b.SetSealKey(key)
	}
	if err != nil {
		log.Error("no shared requestState key: a retry must reach the replica that asked", "err", err)
	}
}
