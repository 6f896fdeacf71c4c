package daemon

import (
	"errors"
	"log/slog"

	"mcpx/internal/jobs"
	"mcpx/internal/relay"
	"mcpx/internal/sock"
	"mcpx/internal/store"
)

// openJobs opens the job store of opts.Files, if it names one, and makes
// c's job manager over it. The daemon that holds the store's lock is its
// only user that may close every other owner's running jobs at start (a
// kill -9 leaves them behind); one that cannot take it goes by leases. A
// store that cannot be opened leaves c without jobs, and says why.
func (c *core) openJobs(opts *Options, r *relay.Relay, log *slog.Logger) {
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
	cfg := opts.Config.Jobs
	c.store = st
	c.jobs = jobs.New(jobs.Options{
		Store: st, Rerun: jobs.RelayRunner(r), Exclusive: exclusive, Logger: log,
		Retention: cfg.Retention, MaxResultBytes: int64(cfg.MaxResultBytes),
	})
}
