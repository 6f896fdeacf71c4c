package store

import (
	"context"
	"time"
)

// Replicas is a store that knows the gateways sharing it: each writes a
// heartbeat as it renews its leases, so that any of them can show the
// cluster (mcpx status).
type Replicas interface {
	// Beat records r (its Owner names it) as seen now, by the store's
	// clock, and forgets the gateways last seen more than forgetAfter
	// ago. r.Started is read as this process's clock's: the row's is the
	// store's now less the time since.
	Beat(ctx context.Context, r Replica, forgetAfter time.Duration) error
	// Leave forgets owner (a clean stop).
	Leave(ctx context.Context, owner string) error
	// Replicas returns every gateway it knows, by owner, with the jobs
	// each runs.
	Replicas(ctx context.Context) ([]Replica, error)
}

// Clock is a store shared by gateways on several machines, whose clock
// (the database's) decides leases: a gateway reads it to see how far its
// own clock is off.
type Clock interface {
	// Now returns the store's time.
	Now(ctx context.Context) (time.Time, error)
}

func (s *Postgres) Now(ctx context.Context) (time.Time, error) {
	var now int64
	if err := s.pool.QueryRow(ctx, `SELECT `+pgNow).Scan(&now); err != nil {
		return time.Time{}, s.fail("reading the store's clock", err)
	}
	return fromMs(now), nil
}

// Replica is one gateway sharing the store.
type Replica struct {
	Owner   string // the owner its job leases name
	Address string // where it serves HTTP hosts; "" for none
	Host    string // its machine's name
	PID     int
	Version string
	Started time.Time
	Seen    time.Time // its last heartbeat, by the store's clock
	// Jobs is how many running jobs it owns; LeaseUntil the latest of
	// their leases (zero without jobs), by the store's clock. Replicas
	// fills them.
	Jobs       int
	LeaseUntil time.Time
	// Age is how long ago Seen was, and LeaseLeft how long until
	// LeaseUntil (negative once past), by the store's clock when
	// Replicas read them: a reader whose clock is skewed compares these,
	// not the times. Replicas fills them.
	Age, LeaseLeft time.Duration
}

func (s *Postgres) Beat(ctx context.Context, r Replica, forgetAfter time.Duration) error {
	var up time.Duration // since it started, on its monotonic clock
	if !r.Started.IsZero() {
		up = max(time.Since(r.Started), 0)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO replicas (owner, address, host, pid, version, started, seen) VALUES ($1,$2,$3,$4,$5,`+pgNow+` - $6,`+pgNow+`)
		ON CONFLICT (owner) DO UPDATE SET address = $2, host = $3, pid = $4, version = $5, seen = `+pgNow,
		r.Owner, r.Address, r.Host, r.PID, r.Version, up.Milliseconds())
	if err != nil {
		return s.fail("writing this replica's heartbeat", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM replicas WHERE seen < `+pgNow+` - $1`, forgetAfter.Milliseconds()); err != nil {
		return s.fail("forgetting replicas gone", err)
	}
	return nil
}

func (s *Postgres) Leave(ctx context.Context, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM replicas WHERE owner = $1`, owner); err != nil {
		return s.fail("removing this replica", err)
	}
	return nil
}

func (s *Postgres) Replicas(ctx context.Context) ([]Replica, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.owner, r.address, r.host, r.pid, r.version, r.started, r.seen,
		count(j.id), coalesce(max(j.lease_until), 0), `+pgNow+`
		FROM replicas r LEFT JOIN jobs j ON j.owner = r.owner AND j.status = 'running'
		GROUP BY r.owner ORDER BY r.started, r.owner`)
	if err != nil {
		return nil, s.fail("listing replicas", err)
	}
	defer rows.Close()
	var out []Replica
	for rows.Next() {
		var r Replica
		var started, seen, lease, now int64
		if err := rows.Scan(&r.Owner, &r.Address, &r.Host, &r.PID, &r.Version, &started, &seen, &r.Jobs, &lease, &now); err != nil {
			return nil, s.fail("listing replicas", err)
		}
		r.Started, r.Seen = fromMs(started), fromMs(seen)
		r.Age = time.Duration(now-seen) * time.Millisecond
		if lease > 1 { // 1: a released lease
			r.LeaseUntil = fromMs(lease)
			r.LeaseLeft = time.Duration(lease-now) * time.Millisecond
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("listing replicas", err)
	}
	return out, nil
}
