// Package store keeps jobs durably: a row per job, written before the job
// is anything else, read back after a restart. It knows nothing of MCP: a
// job's params, progress and result are opaque bytes to it.
//
// [Store] is the one interface the gateway uses; [OpenSQLite] is the
// embedded default (one file under the state directory), [OpenPostgres]
// the store several gateways share (replicas behind a load balancer); both
// run the same contract tests (package storetest). Optional
// interfaces: [CancelWatcher] (a cancel made by any gateway reaches the
// one running the job), [Secrets] (keys every replica reads alike),
// [Tokens] (the named host tokens every replica accepts, by hash) and
// [Replicas] (the gateways sharing the store, by their heartbeats).
// [Postgres] also keeps blobs ([Postgres.Blob], [Postgres.UpdateBlob]):
// small named values, opaque bytes their writer seals (the store holds no
// key and reads nothing in them), updated under a lock every replica
// honours; their user states the interface it needs of them.
//
// The rules every Store keeps:
//
//   - A job belongs to the principal that created it. Get names an id it
//     never had ([ErrUnknown]), another principal's ([ErrForeign]), and
//     one whose result retention removed ([ErrExpired]).
//   - Every write of a running job (progress, end, renewal) is a
//     compare-and-set on its status and the [Lease] it was made under
//     (owner and attempt): a job ends once, and only its owner (the
//     gateway process running it) ends it, except a cancel, which any
//     holder of the id may make and which wins over a result that comes
//     after it. A write under a lease that another owner has taken since
//     (Claim) changes nothing: that is fencing.
//   - An owner holds a lease on its running jobs and renews it; a running
//     job whose lease has lapsed is an orphan, for another owner to
//     close as interrupted or claim to run again (Orphans, Claim).
//   - Leases are times of the store's own clock (the database's), given
//     and compared there: the gateways' clocks, which may be skewed,
//     never decide whether a lease has lapsed. So are the other times a
//     row holds (a job's start, end and updates, a replica's heartbeat)
//     and the ages compared with them (retention): gateways give
//     durations, never times.
//   - The end of a call made under a lease another owner took meanwhile
//     (a gateway cut off from the store while its call ran on) is not
//     lost: KeepLate keeps it beside the job's own end, as its late end.
//
// Methods are safe for concurrent use; Close waits for none of them.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is where a job is in its life.
type Status string

const (
	Running     Status = "running"
	Completed   Status = "completed"   // the tool answered (its result may say isError)
	Failed      Status = "failed"      // the call failed: Job.Error says why
	Cancelled   Status = "cancelled"   // someone cancelled it: Job.Error says who
	Interrupted Status = "interrupted" // its owner died mid-call and it was not run again
)

// Final reports whether s is an end state.
func (s Status) Final() bool { return s != Running }

// Job is one job's row.
type Job struct {
	ID        string
	Principal string
	// Name, Groups and Client are the principal as the audit log names
	// it when the job starts (its readable name, a person's groups, the
	// host's clientInfo.name): kept so that the records of the job run
	// again after a restart, with no request behind it, name them too.
	Name   string
	Groups []string
	Client string
	Server string
	Tool   string
	// Key identifies the call (server, tool and arguments) for attaching
	// a retry to the job; Params are the call's params, kept to run it
	// again after a restart.
	Key    string
	Params []byte
	// Idempotent: the tool said running it twice is harmless.
	Idempotent bool
	Status     Status
	// Attempt counts the runs: 2 once a restart ran it again.
	Attempt int
	// Owner names the process running the job, holding its lease until
	// LeaseUntil.
	Owner      string
	LeaseUntil time.Time
	// Progress is the last progress, coalesced (opaque bytes).
	Progress []byte
	// Result is the answer once Completed (opaque bytes); a Failed job's
	// may hold its error, as its caller encoded it.
	Result []byte
	// Error says why a job Failed, was Cancelled or Interrupted.
	Error string
	// Note says what happened to the job beyond its status (a re-run).
	Note     string
	Created  time.Time
	Updated  time.Time
	Finished time.Time // zero while running
	// Late, if set, is the end of an earlier attempt whose lease another
	// owner took while its call ran on (see KeepLate).
	Late *Late
}

// Lease names one holding of a running job: the owner that runs it and
// the attempt it runs. A claim makes a new one.
type Lease struct {
	Owner   string
	Attempt int
}

// Lease returns the job's lease as it was read.
func (j *Job) Lease() Lease { return Lease{Owner: j.Owner, Attempt: j.Attempt} }

// Late is the end of a call that came after its lease was taken.
type Late struct {
	Status Status // Completed or Failed
	Result []byte // opaque, as Job.Result; nil in List
	Error  string
	At     time.Time
}

// Store is the durable home of jobs.
type Store interface {
	// Create inserts j, which must be Running, with a fresh id, and a
	// lease for its owner of term from now by the store's clock
	// (j.LeaseUntil is not read). j.Created, if set, is when its call
	// began by this process's clock: the row's is the store's now less
	// the time since.
	Create(ctx context.Context, j *Job, term time.Duration) error
	// Get returns principal's job id; "" as principal reads any job (the
	// local user's CLI). Errors: ErrUnknown, ErrForeign, ErrExpired.
	Get(ctx context.Context, principal, id string) (*Job, error)
	// List returns principal's jobs ("" for every principal's), newest
	// first, results left out, at most limit (0: all).
	List(ctx context.Context, principal string, limit int) ([]*Job, error)
	// FindRunning returns principal's running job with key, or nil.
	FindRunning(ctx context.Context, principal, key string) (*Job, error)
	// SetProgress writes a running job's progress (callers coalesce), if
	// it runs under lease l; ok is false when it does not.
	SetProgress(ctx context.Context, id string, l Lease, progress []byte) (ok bool, err error)
	// Finish ends id with status to and result or errText, if it is
	// Running under lease l. ok is false when it was not (cancelled
	// meanwhile, or claimed by another owner): nothing was written.
	Finish(ctx context.Context, id string, l Lease, to Status, result []byte, errText string) (ok bool, err error)
	// KeepLate keeps the end of a call made under lease l, which another
	// owner has claimed since (so Finish refused it), as the job's late
	// end, and adds note to the job's note. ok is false when l was not
	// superseded by a claim, or the job keeps a late end already.
	KeepLate(ctx context.Context, id string, l Lease, to Status, result []byte, errText, note string) (ok bool, err error)
	// Cancel ends a running job as Cancelled with why, whoever owns it;
	// ok is false if it had ended already.
	Cancel(ctx context.Context, id, why string) (ok bool, err error)
	// Release gives up owner's lease on its running jobs (a clean stop):
	// they are orphans at once.
	Release(ctx context.Context, owner string) error
	// Renew extends owner's lease on those of ids that are running and
	// its own to term from now by the store's clock, and returns the ids
	// it extended: one left out is no longer owner's to run (another
	// owner claimed it, or it ended).
	Renew(ctx context.Context, owner string, ids []string, term time.Duration) ([]string, error)
	// Orphans returns the running jobs whose lease ended at least
	// lapsedFor ago by the store's clock, whoever owns them (a negative
	// lapsedFor reaches leases that have not ended yet).
	Orphans(ctx context.Context, lapsedFor time.Duration) ([]*Job, error)
	// Claim makes self the owner of orphan id, found under lease prev,
	// for a new attempt with a lease of term, noting note, if its lease
	// still is prev and ended at least lapsedFor ago; ok is false if
	// another owner claimed, renewed or ended it first.
	Claim(ctx context.Context, id string, prev Lease, self string, term, lapsedFor time.Duration, note string) (ok bool, err error)
	// Expire removes the results of jobs that ended more than keep ago
	// by the store's clock (their ids then read ErrExpired), and forgets
	// those ids once they ended more than forget ago (0: forgets none).
	// It returns how many jobs it expired.
	Expire(ctx context.Context, keep, forget time.Duration) (int, error)
	// Close releases the store.
	Close() error
}

// ErrUnknown: no job has this id.
var ErrUnknown = errors.New("no job has this id")

// ErrForeign: the job belongs to another principal.
var ErrForeign = errors.New("the job belongs to another principal")

// ErrExpired: the job ended longer ago than results are kept.
var ErrExpired = errors.New("the job's result has expired")

// IDError is an error about one job id.
type IDError struct {
	ID  string
	Err error // ErrUnknown, ErrForeign or ErrExpired
}

func (e *IDError) Error() string { return fmt.Sprintf("job %q: %v", e.ID, e.Err) }
func (e *IDError) Unwrap() error { return e.Err }

// LimitError names a store limit that a write would pass.
type LimitError struct {
	Limit string // the config key, "mcpx.jobs.maxResultBytes"
	Max   int64
	Got   int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d bytes is over the limit %s of %d bytes", e.Got, e.Limit, e.Max)
}

// Open opens the store spec names: a PostgreSQL URL (postgres://…) or the
// path of a SQLite file.
func Open(ctx context.Context, spec string) (Store, error) {
	if IsPostgresURL(spec) {
		return OpenPostgres(ctx, spec)
	}
	return OpenSQLite(spec)
}
