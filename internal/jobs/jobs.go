// Package jobs keeps the answer of a relayed call that outlives its host's
// request: a job.
//
// Every call that is, or may become, a job comes in one way:
// [Manager.Start], whatever face it came by (a host's call past its timer
// or in the background, a task of either revision, a script, the local
// API's calls and so the CLI's); a [Way] says how, one of four:
//
//   - [Adopted]: a host's call or script runs on its host request's own
//     goroutine and, only if the host's timer is about to fire first (or
//     the host left, or asked for the background, or for a task), its
//     link (package hostjobs) hands it to the manager: the call goes on
//     where it runs, counted by the manager, which can cancel it, until
//     [Call.Finish]; a call that ends in time never meets the manager.
//   - [Later]: the manager runs the call on a goroutine of its own under
//     a context of its own, a job only once [Call.Promote] makes it one
//     (the local API's streamed call past its client's timer,
//     localapi/calljob.go).
//   - [Now]: the same, a job from its start (the local API's background
//     scripts, localapi/exec.go).
//   - [Relayed]: a call relayed with no host, a job from its start (the
//     local API's background calls, localapi/jobs.go).
//
// Re-runs after a restart are the manager's own. From then on
// the call is a job: a row in the store, owned by this manager (a lease
// it renews), its progress written at most once a second
// ([FlushInterval]), its result or error written when it ends. A cancel (CancelJob) reaches the upstream with a
// relay.JobCancelled cause.
//
// A store shared by several gateways (replicas) makes them one cluster:
// a cancel that any of them writes reaches the one running the job at
// once (store.CancelWatcher), and every replica looks for orphans (jobs
// whose owner's lease has lapsed: it died) every third of a lease, once
// it has reached the store for a whole lease without a failure (so that
// a store that comes back after an outage gives each owner the time to
// renew before anyone takes its jobs). The store's compare-and-set
// Claim gives each orphan to one replica, which closes it or runs it
// again: never both, never twice. Leases are the store's clock's, and
// every write of a job carries the lease it was made under (fencing: see
// store.Lease); a replica holds a job for a term less a margin from when
// it sent the write that gave or renewed its lease, ends its idempotent
// calls when that runs out (before another may take them), says it lost
// its leases (lease.go, hold.go), and never waits on the store under its
// lock; the end of a call whose job was taken meanwhile is kept as the
// job's late result.
//
// When the manager stops (Run's ctx ends), its jobs' calls end with
// relay.Stopping and their leases are released: the rows stay running,
// for the next start to decide. At start (for a store opened on first
// need, at that need: deferred.go), Run finds the running jobs of owners
// that are gone (every other owner's, for an Exclusive store) and
// closes each as interrupted, or, for a tool annotated idempotent that
// has not been run again yet, runs it again once and says so in its note.
// A job is never run again otherwise.
//
// Every method is safe for concurrent use. Run owns every goroutine the
// manager starts and waits for them before it returns; Start before Run
// or after it has returned is refused.
package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// Defaults.
const (
	DefaultRetention      = 24 * time.Hour
	DefaultMaxResultBytes = 4 << 20
	// FlushInterval is how often at most a job's progress is written.
	FlushInterval = time.Second
	// DefaultLeaseTerm is how long an owner's lease lasts; it renews it
	// every third of that.
	DefaultLeaseTerm = 30 * time.Second
	// forgetAfter is how long an expired id still reads "expired" rather
	// than "unknown", in retention periods.
	forgetAfter = 7
)

// LocalPrincipal owns the jobs of the local user: those started with the
// CLI (mcpx call --background, mcpx exec --background) and those of every
// host on a stream (stdio, or handed to the daemon over its socket), which
// runs as the same user. A host that restarts, or another of the user's
// hosts, reads them by id; HTTP hosts are principals of their own.
const LocalPrincipal = principal.LocalID

// Runner runs a stored job's call again (after a restart), reporting
// progress to c.
type Runner func(ctx context.Context, j *store.Job, c *Call) (json.RawMessage, error)

// Options configure a Manager.
type Options struct {
	Store store.Store
	// Open, if set, opens the store on the first use that needs it
	// (deferred.go), in place of Store, and says whether it is this
	// manager's alone (Exclusive, decided then).
	Open func() (st store.Store, exclusive bool, err error)
	// Rerun runs an idempotent job again after a restart; nil closes
	// every orphan as interrupted.
	Rerun Runner
	// Exclusive: this manager is the store's only user (the embedded
	// store, under the daemon's lock): at start, every running job of
	// another owner is an orphan, whatever its lease says. Otherwise the
	// store may be shared (replicas): orphans are looked for all along.
	Exclusive bool
	// LeaseTerm is how long an owner's lease on its jobs lasts (0:
	// DefaultLeaseTerm): a replica that dies leaves its jobs to the
	// others after about this long.
	LeaseTerm time.Duration
	// Retention is how long a finished job's result is kept (0: 24 h).
	Retention time.Duration
	// MaxResultBytes is the largest result kept (0: 4 MiB).
	MaxResultBytes int64
	Logger         *slog.Logger
	// Observer, if set, hears of this manager's jobs (metrics, the live
	// view).
	Observer Observer
	// Clock is this machine's clock as the manager reads it (nil:
	// time.Now): a seam for tests of a skewed clock. Leases never read
	// it (they are the store's); it stamps a job's start and tells how
	// far it is off the store's (store.Clock).
	Clock func() time.Time
	// Replica, if set, describes this gateway to the others sharing a
	// store that knows replicas (store.Replicas): its Address, Host, PID
	// and Version (the manager fills Owner and Started). It heartbeats
	// with each lease renewal; see Cluster.
	Replica *store.Replica
	// Audit, if set, records each job's start (or promotion), end and
	// cancel (audit.go).
	Audit *audit.Log
}

// Observer hears of a manager's jobs. Its methods must not block nor
// call the manager: JobStarted is called under the manager's lock, so
// that a job's end is always heard after its start.
type Observer interface {
	// JobStarted: a call became a job (or a stored job runs again).
	JobStarted(server, tool string)
	// JobProgressed: a running job's progress moved.
	JobProgressed()
	// JobEnded: a job this manager ran ended as status (a store.Status,
	// as /v1 spells it: observers need not know the store); a stop of
	// mcpx that leaves it to the next start ends it here as interrupted.
	JobEnded(server, tool, status string)
}

// noObserver hears nothing.
type noObserver struct{}

func (noObserver) JobStarted(string, string)       {}
func (noObserver) JobProgressed()                  {}
func (noObserver) JobEnded(string, string, string) {}

// Manager runs jobs over a store.
type Manager struct {
	st      store.Store
	opts    Options
	owner   string
	created time.Time
	log     *slog.Logger

	writes atomic.Int64 // store writes, for tests and benchmarks
	njobs  atomic.Int64 // live jobs: HasJobs without the lock, on every call

	mu      sync.Mutex
	running bool // between Run's start and its end
	calls   sync.WaitGroup
	live    map[*Call]struct{}
	byID    map[string]*Call
	byKey   map[string]*Call // principal+"\x00"+key of live jobs
	dirty   map[*Call]struct{}
	// unwritten are ends of jobs the store failed to take, by id.
	unwritten map[string]ending
	started   chan struct{} // closed once Run has recovered orphans
	needed    chan struct{} // closed by the first use that needs the store (Options.Open)
	needOnce  sync.Once
	openErr   error    // why the store cannot be used; set before started closes
	cluster   *Cluster // the replicas as last read; nil before
	leases    LeaseState
	lapses    int // calls ended since the leases were last held (hold.go)
	// unfenced, for tests only, makes the manager ignore the loss of its
	// leases (it ends no call): what fencing prevents can then be seen.
	unfenced bool
}

// New returns a manager over opts.Store; Run runs it.
func New(opts Options) *Manager {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.LeaseTerm <= 0 {
		opts.LeaseTerm = DefaultLeaseTerm
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.Observer == nil {
		opts.Observer = noObserver{}
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Manager{
		st: opts.Store, opts: opts, owner: "mcpx-" + randomID(8), created: time.Now(), log: log,
		live: map[*Call]struct{}{}, byID: map[string]*Call{}, byKey: map[string]*Call{}, dirty: map[*Call]struct{}{},
		unwritten: map[string]ending{}, started: make(chan struct{}), needed: make(chan struct{}),
	}
}

// Retention is how long a finished job's result is kept.
func (m *Manager) Retention() time.Duration { return m.opts.Retention }

// Owner names this manager in the store's leases.
func (m *Manager) Owner() string { return m.owner }

// Writes returns how many writes the manager has made to the store.
func (m *Manager) Writes() int64 { return m.writes.Load() }

// Started is closed once Run has dealt with the orphans it found (for a
// store opened on first need: once it has opened it, or failed to, or
// stopped before anything needed it).
func (m *Manager) Started() <-chan struct{} { return m.started }

// Run recovers orphaned jobs, then writes progress, renews leases and
// expires old results until ctx ends; then it ends its jobs' calls with
// relay.Stopping, waits for them and releases their leases.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	m.running = true
	m.mu.Unlock()
	bg := context.WithoutCancel(ctx)
	if m.opts.Open != nil && !m.openOnNeed(ctx) {
		close(m.started)
		<-ctx.Done()
		m.stop(bg)
		return nil
	}
	// A shared store that does not answer holds up the start for a term
	// at most (the search for orphans goes on every third of a term); an
	// exclusive store's orphans are looked for at start alone.
	startCtx, cancel := bg, context.CancelFunc(func() {})
	if !m.opts.Exclusive {
		startCtx, cancel = context.WithTimeout(bg, m.opts.LeaseTerm)
	}
	m.recover(startCtx)
	m.beat(startCtx)
	cancel()
	close(m.started)
	m.expire(bg)
	expired := time.Now()
	stopWatch := m.watchCancels(ctx)
	defer stopWatch()
	leaseCtx, stopLeases := context.WithCancel(bg)
	leasesDone := make(chan struct{})
	go func() { defer close(leasesDone); m.keepLeases(leaseCtx) }()
	flush := time.NewTicker(FlushInterval)
	defer flush.Stop()
	expire := time.NewTicker(time.Minute)
	defer expire.Stop()
	for {
		select {
		case <-flush.C:
			wctx, cancel := context.WithTimeout(bg, m.writeDeadline())
			m.flush(wctx)
			m.writeEndings(wctx)
			cancel()
		case <-expire.C:
			if m.quiet() && time.Since(expired) < m.idleExpiry() {
				continue
			}
			m.expire(bg)
			expired = time.Now()
		case <-ctx.Done():
			stopLeases()
			<-leasesDone
			m.stop(bg)
			return nil
		}
	}
}

// stop ends every call with relay.Stopping, waits for them and releases
// the leases of the jobs among them.
func (m *Manager) stop(ctx context.Context) {
	m.mu.Lock()
	m.running = false
	for c := range m.live {
		c.cancel(&relay.Cause{Kind: relay.Stopping})
	}
	m.mu.Unlock()
	m.calls.Wait()
	if m.st == nil {
		return // never opened (Options.Open): nothing of this manager's is in it
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.LeaseTerm)
	defer cancel()
	m.flush(ctx)
	m.writeEndings(ctx)
	m.write(func() error { return m.st.Release(ctx, m.owner) })
	m.leave(ctx)
}

// idleExpiry is how often results are expired while the manager is quiet
// (lease.go): a 24th of the retention, between a minute and an hour, so
// that an idle daemon leaves its store alone for that long, and a result
// outlives its retention by at most that much.
func (m *Manager) idleExpiry() time.Duration {
	return min(max(m.opts.Retention/24, time.Minute), time.Hour)
}

func (m *Manager) expire(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, m.writeDeadline()) // the flushes wait for it
	defer cancel()
	n, err := m.st.Expire(ctx, m.opts.Retention, forgetAfter*m.opts.Retention) // ages, by the store's clock
	m.writes.Add(1)
	if err != nil {
		m.log.Warn("expiring job results", "err", err)
	} else if n > 0 {
		m.log.Info("expired job results", "jobs", n, "retention", m.opts.Retention)
	}
}

// write makes one store write, counted, logging its error.
func (m *Manager) write(fn func() error) {
	m.writes.Add(1)
	if err := fn(); err != nil {
		m.log.Warn("writing the job store", "err", err)
	}
}

// flush writes the progress of every job that has moved since the last
// flush: at most one write per job per FlushInterval.
func (m *Manager) flush(ctx context.Context) {
	m.mu.Lock()
	var todo []*Call
	for c := range m.dirty {
		todo = append(todo, c)
	}
	clear(m.dirty)
	m.mu.Unlock()
	for _, c := range todo {
		p := c.progressJSON()
		m.write(func() error { _, err := m.st.SetProgress(ctx, c.id, c.lease(), p); return err })
	}
}

// ErrStopped: the manager is not running (not yet, or no longer).
var ErrStopped = errors.New("mcpx is stopping: no new jobs")

// Key identifies a call by its server, tool and arguments, for attaching
// a retry to the job it became: arguments that differ only in spacing or
// member order are the same.
func Key(server, tool string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	h.Write([]byte{0})
	var v any
	if len(args) > 0 && json.Unmarshal(args, &v) == nil {
		canon, _ := json.Marshal(v) // maps marshal with sorted keys
		h.Write(canon)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// randomID returns n random bytes, in lower-case base32.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return strings.ToLower(b32.EncodeToString(b))
}

// NewID returns a job id: 128 random bits, unguessable.
func NewID() string { return "job_" + randomID(16) }
