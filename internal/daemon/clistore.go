package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/audit"
	"mcpx/internal/audit/auditstore"
	"mcpx/internal/config"
	"mcpx/internal/jobs"
	"mcpx/internal/oauth"
	"mcpx/internal/store"
)

// What the CLI reads of the job store, or writes to it, where no daemon
// runs to ask (a replica run by mcpx serve --http, login where the
// browser is, a token minted, mcpx doctor): cmd/mcpx hands these to it,
// so that only the daemon (and hosttoken, for the named tokens) opens
// the store.

// OpenSignIns opens the sign-ins kept in the shared store cfg names,
// each sealed with the key mcpx.oauth names (read through getenv). close
// releases the store.
func OpenSignIns(ctx context.Context, cfg *config.Config, getenv func(string) string) (recs oauth.Records, close func(), err error) {
	keys, err := oauth.LoadKeys(cfg.SignInKey, getenv)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	st, err := store.OpenPostgres(ctx, cfg.Store)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the shared store of sign-ins: %w", err)
	}
	return &oauth.Sealed{Blobs: st, Keys: keys}, func() { st.Close() }, nil
}

// ReadCluster reads the replicas from the shared store cfg names.
func ReadCluster(ctx context.Context, cfg *config.Config) (*apitype.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	st, err := store.OpenPostgres(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	list, err := st.Replicas(ctx)
	if err != nil {
		return nil, err
	}
	lease := cfg.Jobs.LeaseTerm
	if lease <= 0 {
		lease = jobs.DefaultLeaseTerm
	}
	now := time.Now()
	c := &apitype.Cluster{LeaseTermMs: lease.Milliseconds(), Read: now, Replicas: []apitype.Replica{}}
	for _, r := range list {
		// Ages by the store's clock, shown on this machine's (see jobs.Cluster.Seen).
		var until time.Time
		if !r.LeaseUntil.IsZero() {
			until = now.Add(r.LeaseLeft)
		}
		c.Replicas = append(c.Replicas, apitype.Replica{
			Owner: r.Owner, Address: r.Address, Host: r.Host, PID: r.PID, Version: r.Version, Started: r.Started,
			Seen: now.Add(-r.Age), Live: r.Age < lease, Jobs: r.Jobs, LeaseUntil: until,
		})
	}
	return c, nil
}

// ProbeStore looks at the shared store cfg names without changing it:
// no migration runs, so a doctor can look at a store that a newer or
// older mcpx serves.
func ProbeStore(ctx context.Context, cfg *config.Config) (apitype.StoreProbe, error) {
	p, err := store.ProbePostgres(ctx, cfg.Store)
	return apitype.StoreProbe{Where: p.Where, Schema: p.Schema, Build: store.SchemaVersion, Replicas: p.Replicas}, err
}

// WriteAudit appends recs to the audit table of the job store cfg's
// daemon keeps: the shared PostgreSQL store cfg names, else the SQLite
// file jobs.
func WriteAudit(ctx context.Context, cfg *config.Config, jobs string, recs []audit.Record) error {
	var (
		st  store.Store
		err error
	)
	if cfg.Store != "" {
		st, err = store.OpenPostgres(ctx, cfg.Store)
	} else {
		st, err = store.OpenSQLite(jobs)
	}
	if err != nil {
		return fmt.Errorf("opening the store for the audit log: %w", err)
	}
	defer st.Close()
	tbl, ok := st.(store.Audit)
	if !ok {
		return errors.New("the store keeps no audit table")
	}
	sink := auditstore.NewSink(tbl)
	if err := sink.Write(ctx, recs); err != nil {
		return fmt.Errorf("writing the audit log to %s: %w", sink.Name(), err)
	}
	return nil
}
