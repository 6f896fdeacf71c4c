package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/audit/auditstore"
	"mcpx/internal/store"
)

// pruneEvery is how often the audit table is pruned to its bounds.
const pruneEvery = 10 * time.Minute

// auditing is a core's audit log (mcpx.audit) and the services that
// write and prune it. A nil *auditing is none.
type auditing struct {
	l       *audit.Log
	st      store.Audit // the table, nil for none
	file    *audit.File // the file, nil for none
	logger  *slog.Logger
	maxAge  time.Duration
	maxRows int

	mu    sync.Mutex
	stopF func() // set by run
}

// openAudit makes c's audit log of the config's mcpx.audit, over c's
// store when it keeps records there. A sink that cannot be opened is
// kept and tried at each write: failing closed, tool calls are refused
// until it opens; failing open, its records are counted and dropped.
func (c *core) openAudit(opts *Options, log *slog.Logger) {
	cfg := opts.Config.Audit
	if !cfg.Enabled || opts.LookOnly {
		return
	}
	a := &auditing{maxAge: cfg.MaxAge, maxRows: cfg.MaxRows, logger: log}
	var sinks []audit.Sink
	if cfg.File != "" {
		f, err := audit.OpenFile(cfg.File)
		if err != nil {
			log.Error("the audit log's file cannot be opened; trying again at each write", "file", cfg.File, "err", err)
			f = audit.LazyFile(cfg.File)
		}
		a.file = f
		sinks = append(sinks, f)
	}
	if cfg.Store {
		if st, ok := c.store.(store.Audit); ok {
			a.st = st
			sinks = append(sinks, auditstore.NewSink(st))
		} else {
			log.Error("the audit log names the store, and this daemon has none: its records cannot be written there")
			sinks = append(sinks, noStore{})
		}
	}
	replica := ""
	if c.jobs != nil {
		replica = c.jobs.Owner()
	}
	a.l = audit.New(audit.Options{Sinks: sinks, Queue: cfg.Queue, FailOpen: cfg.FailOpen, Replica: replica, Logger: log})
	c.audit = a
	c.relay.SetAudit(a.l)
	if c.jobs != nil {
		c.jobs.SetAudit(a.l)
	}
}

// noStore is the store sink of a daemon with no store: every write
// fails.
type noStore struct{}

func (noStore) Name() string { return "the store" }
func (noStore) Write(context.Context, []audit.Record) error {
	return errors.New("this daemon has no job store (mcpx.audit.store is true)")
}

func (a *auditing) log() *audit.Log {
	if a == nil {
		return nil
	}
	return a.l
}

func (a *auditing) table() store.Audit {
	if a == nil {
		return nil
	}
	return a.st
}

// run starts the writer and the pruner; stop ends them, once the writer
// has written what it could of the queue.
func (a *auditing) run(ctx context.Context) {
	if a == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.l.Run(ctx) })
	if a.st != nil {
		wg.Go(func() { _ = auditstore.Prune(ctx, a.logger, a.st, a.maxAge, a.maxRows, pruneEvery) })
	}
	a.mu.Lock()
	a.stopF = sync.OnceFunc(func() {
		cancel()
		wg.Wait()
		if a.file != nil {
			a.file.Close()
		}
	})
	a.mu.Unlock()
}

func (a *auditing) stop() {
	if a == nil {
		return
	}
	a.mu.Lock()
	f := a.stopF
	a.mu.Unlock()
	if f != nil {
		f()
	}
}

// signInEnded records the end of a sign-in the daemon ran for a host.
func (a *auditing) signInEnded(server string, err error) {
	if a == nil {
		return
	}
	r := audit.Record{Kind: audit.KindSignIn, Server: server, Outcome: "ok"}
	if err != nil {
		r.Outcome = "failed"
	}
	a.l.Add(r)
}
