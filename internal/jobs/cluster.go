package jobs

import (
	"context"
	"time"

	"mcpx/internal/store"
)

// forgetReplicasAfter is how long a replica not seen (killed, or its
// machine gone) is still shown, as lapsed.
const forgetReplicasAfter = time.Hour

// Cluster is the replicas sharing the store as a manager last read them.
type Cluster struct {
	Self      string // this manager's owner
	LeaseTerm time.Duration
	// Replicas' times are the store's clock's; their Age and LeaseLeft
	// are what a reader compares (Live, Seen).
	Replicas []store.Replica
	Read     time.Time // when they were read, by this machine's clock
	Err      error     // why they could not be (Replicas are the last read)
}

// Cluster returns the replicas sharing the store as last read (each
// heartbeat reads them), or nil when this manager is no replica (its
// Options name none, or its store does not know replicas).
func (m *Manager) Cluster() *Cluster {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cluster == nil {
		return nil
	}
	c := *m.cluster
	return &c
}

// replicas is the store as store.Replicas when this manager is a
// replica.
func (m *Manager) replicas() store.Replicas {
	rs, ok := m.st.(store.Replicas)
	if !ok || m.opts.Replica == nil {
		return nil
	}
	return rs
}

// beat writes this replica's heartbeat and reads the cluster back.
func (m *Manager) beat(ctx context.Context) {
	rs := m.replicas()
	if rs == nil {
		return
	}
	r := *m.opts.Replica
	r.Owner, r.Started = m.owner, m.created
	m.writes.Add(1)
	err := rs.Beat(ctx, r, forgetReplicasAfter)
	var list []store.Replica
	if err == nil {
		list, err = rs.Replicas(ctx)
	}
	if err != nil {
		m.log.Debug("writing this replica's heartbeat", "err", err) // renewing the leases warns
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &Cluster{Self: m.owner, LeaseTerm: m.opts.LeaseTerm, Read: m.opts.Clock(), Err: err, Replicas: list}
	if err != nil && m.cluster != nil {
		c.Replicas = m.cluster.Replicas
	}
	m.cluster = c
}

// leave removes this replica from the cluster (a clean stop).
func (m *Manager) leave(ctx context.Context) {
	if rs := m.replicas(); rs != nil {
		m.write(func() error { return rs.Leave(ctx, m.owner) })
	}
}

// Live reports whether r has written a heartbeat within the last lease
// term, by the store's clock.
func (c *Cluster) Live(r store.Replica) bool { return r.Age < c.LeaseTerm }

// Seen returns when r last wrote a heartbeat, and until when its jobs'
// leases run (zero without), as times of this machine's clock: the
// store's ages and durations from when the cluster was read, so that a
// skew between the two clocks does not show a live replica as lapsed.
func (c *Cluster) Seen(r store.Replica) (seen, leaseUntil time.Time) {
	seen = c.Read.Add(-r.Age)
	if !r.LeaseUntil.IsZero() {
		leaseUntil = c.Read.Add(r.LeaseLeft)
	}
	return seen, leaseUntil
}
