package cli

import (
	"context"
	"os"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
)

// store checks the job store: the embedded SQLite file is this user's
// alone; a shared PostgreSQL store answers and its schema is one this
// build can use. It looks without changing anything (no migration runs).
func (d *doctor) store(ctx context.Context, cfg *config.Config, paths config.Paths) {
	if cfg.Store == "" {
		file := paths.Daemon(cfg.File, d.env.Build).Jobs
		fi, err := os.Stat(file)
		switch {
		case err != nil:
			d.add("store", file, levelInfo, "no job store yet (the first job makes it)")
		case fi.Mode().Perm()&0o077 != 0:
			d.add("store", file, levelFail, "mode %v: others may read job results (chmod 600)", fi.Mode().Perm())
		default:
			d.add("store", file, levelOK, "embedded SQLite store, %d bytes", fi.Size())
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := apitype.StoreProbe{}, errNoStoreAccess
	if d.env.ProbeStore != nil {
		p, err = d.env.ProbeStore(ctx, cfg)
	}
	name := p.Where
	if name == "" {
		name = "store"
	}
	switch {
	case err != nil:
		d.add("store", name, levelFail, "%v", err)
	case p.Schema > p.Build:
		d.add("store", name, levelFail, "the schema is at version %d, newer than this mcpx's %d: upgrade mcpx", p.Schema, p.Build)
	case p.Schema == 0:
		d.add("store", name, levelInfo, "PostgreSQL answers; no mcpx has used this database yet (the first gateway to start makes its schema)")
	case p.Schema < p.Build:
		d.add("store", name, levelInfo, "PostgreSQL answers; the schema is at version %d, and the next gateway of this build to start brings it to %d; gateways seen in the last minute: %d", p.Schema, p.Build, p.Replicas)
	default:
		d.add("store", name, levelOK, "PostgreSQL answers, schema version %d; gateways seen in the last minute: %d", p.Schema, p.Replicas)
	}
}
