package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"mcpx/internal/bridge"
	"mcpx/internal/config"
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
// kill -9 leaves them behind); one that cannot take it goes by leases.
// The daemon opens the embedded store at start; a gateway of its own
// (serve) when a job first needs it, and takes the lock then. A store
// that cannot be opened leaves c without jobs, and says why (at first
// need, to the call that needed it); a
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
	jo := jobs.Options{Rerun: jobs.RelayRunner(r), Logger: log, LeaseTerm: cfg.LeaseTerm,
		Retention: cfg.Retention, MaxResultBytes: int64(cfg.MaxResultBytes), Observer: obs}
	if opts.Files.Socket == "" && !(opts.Config.Audit.Enabled && opts.Config.Audit.Store) {
		// A gateway of its own (serve) opens the embedded store when a
		// job first needs it: most never make one. The daemon opens it
		// at start, to deal at once with the jobs a gateway that died
		// left running; so does a gateway whose audit log is kept there.
		jo.Open = func() (store.Store, bool, error) {
			st, exclusive, err := c.openSQLite(opts.Files, log)
			if err != nil {
				return nil, false, fmt.Errorf("no jobs: opening the job store failed: %w", err)
			}
			return st, exclusive, nil
		}
		c.jobs, c.jobsOnNeed = jobs.New(jo), true
		return
	}
	st, exclusive, err := c.openSQLite(opts.Files, log)
	if err != nil {
		return
	}
	jo.Store, jo.Exclusive = st, exclusive
	c.jobs = jobs.New(jo)
}

// openSQLite opens the embedded job store of files and makes it c's,
// exclusive if this gateway takes its lock. It says in the log why it
// fails.
func (c *core) openSQLite(files config.DaemonFiles, log *slog.Logger) (st *store.SQLite, exclusive bool, err error) {
	if st, err = store.OpenSQLite(files.Jobs); err != nil {
		log.Error("no jobs: opening the job store failed", "err", err)
		return nil, false, err
	}
	if files.JobsLock != "" {
		unlock, err := sock.Lock(files.JobsLock)
		switch {
		case err == nil:
			c.unlock, exclusive = func() { _ = unlock() }, true
		case !errors.Is(err, sock.ErrLocked):
			log.Warn("locking the job store", "err", err)
		}
	}
	c.store = st
	return st, exclusive, nil
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
