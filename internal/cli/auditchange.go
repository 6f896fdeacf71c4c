package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"mcpx/internal/audit"
	"mcpx/internal/config"
	"mcpx/internal/principal"
)

// The changes the CLI makes by itself, with no daemon (a host token
// minted or revoked, the shared sign-in to a server made or ended), are
// recorded in the config's audit log (mcpx.audit) by auditChange: one
// record, written synchronously to the same sinks the daemon writes (the
// file, and the store's table), before the change. Failing closed (the
// default), a record that cannot be written refuses the change; failing
// open, it is said on standard error and the change goes on.

// auditTimeout bounds the write of one record, the store's opening
// included.
const auditTimeout = 20 * time.Second

// auditor writes the CLI's records for one command.
type auditor struct {
	env   *Env
	cfg   *config.Config
	paths config.Paths
}

// change records rec (a change about to be made) and then makes it with
// do. A record that cannot be written fails closed or open as the config
// says; a change that then fails leaves a second record, "failed", with
// mcpx's reason.
func (a auditor) change(ctx context.Context, rec audit.Record, do func() error) error {
	if err := a.record(ctx, rec); err != nil {
		return err
	}
	err := do()
	if err != nil {
		a.failed(ctx, rec, err)
	}
	return err
}

// failed records that the change rec named did not happen, because of
// why; a record that cannot be written is said on standard error (the
// change is not made either way).
func (a auditor) failed(ctx context.Context, rec audit.Record, why error) {
	rec.Outcome, rec.Detail = "failed", why.Error()
	if err := a.write(ctx, rec); err != nil && a.cfg.Audit.Enabled {
		fmt.Fprintf(a.env.Stderr, "mcpx: the audit log cannot be written: %v\n", err)
	}
}

// record writes rec, stamped with who runs the CLI. Failing closed, an
// error says the change was refused.
func (a auditor) record(ctx context.Context, rec audit.Record) error {
	err := a.write(ctx, rec)
	switch {
	case err == nil:
		return nil
	case a.cfg.Audit.FailOpen:
		fmt.Fprintf(a.env.Stderr, "mcpx: audit record lost (mcpx.audit.onFailure is \"open\"): %v\n", err)
		return nil
	}
	return fmt.Errorf("refused: the audit log cannot be written (%w); mcpx.audit.onFailure is \"closed\", so nothing was changed", err)
}

// write writes rec to every sink the config names, each tried.
func (a auditor) write(ctx context.Context, rec audit.Record) error {
	cfg := a.cfg.Audit
	if !cfg.Enabled {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	rec.Time = time.Now()
	rec.Who(principal.LocalUser())
	rec.Face, rec.Name = audit.FaceCLI, cliUser(a.env)
	recs := []audit.Record{rec}
	var errs []error
	if cfg.File != "" {
		errs = append(errs, a.writeFile(ctx, recs))
	}
	if cfg.Store {
		errs = append(errs, a.writeStore(ctx, recs))
	}
	return errors.Join(errs...)
}

// writeFile appends recs to the audit file. "-", the daemon's standard
// output, is the CLI's standard error: its standard output carries what
// a script reads (a token).
func (a auditor) writeFile(ctx context.Context, recs []audit.Record) error {
	if a.cfg.Audit.File == "-" {
		return audit.NewWriter(a.env.Stderr).Write(ctx, recs)
	}
	f, err := audit.OpenFile(a.cfg.Audit.File)
	if err != nil {
		return err
	}
	err = f.Write(ctx, recs)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing the audit log to %s: %w", f.Name(), cerr)
	} else if err != nil {
		err = fmt.Errorf("writing the audit log to %s: %w", f.Name(), err)
	}
	return err
}

// writeStore appends recs to the audit table of the job store the
// daemon of this config keeps (the shared PostgreSQL store, or this
// user's SQLite file), through the daemon's Env.WriteAudit.
func (a auditor) writeStore(ctx context.Context, recs []audit.Record) error {
	if a.env.WriteAudit == nil {
		return errNoStoreAccess
	}
	return a.env.WriteAudit(ctx, a.cfg, a.paths.Daemon(a.cfg.File, a.env.Build).Jobs, recs)
}

// cliUser names who runs the CLI, and where: "alice@build-3" ($USER,
// else $LOGNAME, else the uid; and the machine's name).
func cliUser(env *Env) string {
	name := env.getenv("USER")
	if name == "" {
		name = env.getenv("LOGNAME")
	}
	if name == "" {
		name = "uid " + fmt.Sprint(os.Getuid())
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		name += "@" + h
	}
	return name
}
