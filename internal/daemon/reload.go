package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/config"
)

// reloader applies edits of the config file to a running core: when the
// file changes (checked every second) or a client asks (mcpx reload).
// Servers added, removed or changed are applied at once; in-flight calls of
// unchanged servers are not disturbed. Settings that shape listeners or
// names need a restart and are reported as ignored. ${VAR} references are
// expanded with the values clients sent with their reloads (mcpx reload
// sends the ones its environment has), else the daemon's own environment.
// A server whose own entry has a mistake is left unconfigured, the others
// applied; a file that cannot be read at all changes nothing, and status
// shows why until a reload succeeds.
//
// A client's reload answers what changed since the config of the last
// client's reload (or the daemon's start), not since the running one: the
// watcher usually applies an edit before the client who made it asks, and
// that client is to hear what its edit changed, not "unchanged".
type reloader struct {
	c   *core
	log *slog.Logger

	mu       sync.Mutex
	cfg      *config.Config // running
	reported *config.Config // as of the last client's reload
	stamp    os.FileInfo
	vars     map[string]string      // ${VAR} values clients sent
	failure  *apitype.ReloadFailure // of the latest reload, nil after a good one
}

func newReloader(c *core, cfg *config.Config, log *slog.Logger) *reloader {
	r := &reloader{c: c, cfg: cfg, reported: cfg, log: log}
	if cfg.File != "" {
		r.stamp, _ = os.Stat(cfg.File)
	}
	return r
}

// reload re-reads the file now, for a client, with the ${VAR} values vars
// gives from now on. A file with an error changes nothing.
func (r *reloader) reload(vars map[string]string) (apitype.ReloadResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range vars {
		if r.vars == nil {
			r.vars = map[string]string{}
		}
		r.vars[k] = v
	}
	if err := r.applyLocked(); err != nil {
		return apitype.ReloadResult{}, err
	}
	out := diffServers(r.reported, r.cfg)
	out.Ignored = ignoredSettings(r.reported, r.cfg)
	for name, e := range r.cfg.Unconfigured {
		if out.Unconfigured == nil {
			out.Unconfigured = map[string]string{}
		}
		out.Unconfigured[name] = e.Reason()
	}
	r.reported = r.cfg
	return out, nil
}

// applyLocked re-reads the file and applies it to the core.
func (r *reloader) applyLocked() error {
	if r.cfg.File == "" {
		return fmt.Errorf("the daemon runs the built-in config: there is no file to reload")
	}
	r.stamp, _ = os.Stat(r.cfg.File)
	cfg, err := config.Load(r.cfg.File, &config.LoadOptions{Lookup: r.lookupLocked, PerServer: true})
	if err != nil {
		r.log.Error("config reload failed; keeping the running config", "err", err)
		r.failure = &apitype.ReloadFailure{At: time.Now(), Error: err.Error()}
		return err
	}
	r.failure = nil
	for name, err := range cfg.Unconfigured {
		r.log.Warn("a server is not configured", "server", name, "err", err)
	}
	res := r.c.pool.Reload(cfg)
	r.c.relay.SetConfig(cfg)
	ignored := ignoredSettings(r.cfg, cfg)
	r.cfg = cfg
	r.log.Info("config reloaded", "added", res.Added, "removed", res.Removed, "changed", res.Changed, "ignored", ignored)
	return nil
}

// lookupLocked is the reload's ${VAR} lookup: what clients sent, else the
// daemon's environment.
func (r *reloader) lookupLocked(name string) (string, bool) {
	if v, ok := r.vars[name]; ok {
		return v, true
	}
	return os.LookupEnv(name)
}

// failed returns why the latest reload failed, nil after a good one.
func (r *reloader) failed() *apitype.ReloadFailure {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failure
}

// ignoredSettings lists the settings that differ between old and cur and
// take effect only at a restart.
func ignoredSettings(old, cur *config.Config) []string {
	var out []string
	for name, same := range map[string]bool{
		"mcpx.toolNames":       reflect.DeepEqual(cur.ToolNames, old.ToolNames),
		"mcpx.http":            reflect.DeepEqual(cur.HTTP, old.HTTP),
		"mcpx.traces":          cur.Traces == old.Traces,
		"mcpx.maxMessageBytes": cur.MaxMessageBytes == old.MaxMessageBytes,
		"mcpx.probeTimeout":    cur.ProbeTimeout == old.ProbeTimeout,
		"mcpx.daemonIdleExit":  cur.DaemonIdleExit == old.DaemonIdleExit,
		"mcpx.store":           cur.Store == old.Store,
		"mcpx.jobs":            cur.Jobs == old.Jobs,
	} {
		if !same {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// diffServers compares the enabled servers of two configs as the pool's
// reload does: a server whose upstream differs is changed (call limits
// alone apply without a restart, so they do not count).
func diffServers(old, cur *config.Config) apitype.ReloadResult {
	enabled := func(c *config.Config) map[string]*config.Server {
		m := map[string]*config.Server{}
		for name, s := range c.Servers {
			if !s.Disabled {
				m[name] = s
			}
		}
		return m
	}
	was, now := enabled(old), enabled(cur)
	var out apitype.ReloadResult
	for name, s := range now {
		switch o, ok := was[name]; {
		case !ok:
			out.Added = append(out.Added, name)
		case o.SameUpstream(s):
			out.Unchanged = append(out.Unchanged, name)
		default:
			out.Changed = append(out.Changed, name)
		}
	}
	for name := range was {
		if _, ok := now[name]; !ok {
			out.Removed = append(out.Removed, name)
		}
	}
	for _, l := range [][]string{out.Added, out.Removed, out.Changed, out.Unchanged} {
		slices.Sort(l)
	}
	return out
}

// watch reloads whenever the file's size or modification time changes,
// until ctx ends.
func (r *reloader) watch(ctx context.Context) {
	if r.cfg.File == "" {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		file := r.cfg.File // applyLocked replaces r.cfg
		r.mu.Unlock()
		fi, err := os.Stat(file)
		r.mu.Lock()
		changed := err == nil && (r.stamp == nil || fi.Size() != r.stamp.Size() || !fi.ModTime().Equal(r.stamp.ModTime()))
		r.mu.Unlock()
		if changed {
			r.mu.Lock()
			_ = r.applyLocked() // logged; a client's reload reports it
			r.mu.Unlock()
		}
	}
}
