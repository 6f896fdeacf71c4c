package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
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
// expanded with the daemon's own environment.
type reloader struct {
	c   *core
	log *slog.Logger

	mu    sync.Mutex
	cfg   *config.Config
	stamp os.FileInfo
}

func newReloader(c *core, cfg *config.Config, log *slog.Logger) *reloader {
	r := &reloader{c: c, cfg: cfg, log: log}
	if cfg.File != "" {
		r.stamp, _ = os.Stat(cfg.File)
	}
	return r
}

// reload re-reads the file now. A file with an error changes nothing.
func (r *reloader) reload() (apitype.ReloadResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.File == "" {
		return apitype.ReloadResult{}, fmt.Errorf("the daemon runs the built-in config: there is no file to reload")
	}
	r.stamp, _ = os.Stat(r.cfg.File)
	cfg, err := config.Load(r.cfg.File, nil)
	if err != nil {
		r.log.Error("config reload failed; keeping the running config", "err", err)
		return apitype.ReloadResult{}, err
	}
	res := r.c.pool.Reload(cfg)
	r.c.relay.SetConfig(cfg)
	out := apitype.ReloadResult{Added: res.Added, Removed: res.Removed, Changed: res.Changed, Unchanged: res.Unchanged}
	for name, same := range map[string]bool{
		"mcpx.toolNames":       reflect.DeepEqual(cfg.ToolNames, r.cfg.ToolNames),
		"mcpx.http":            reflect.DeepEqual(cfg.HTTP, r.cfg.HTTP),
		"mcpx.traces":          cfg.Traces == r.cfg.Traces,
		"mcpx.maxMessageBytes": cfg.MaxMessageBytes == r.cfg.MaxMessageBytes,
		"mcpx.probeTimeout":    cfg.ProbeTimeout == r.cfg.ProbeTimeout,
		"mcpx.daemonIdleExit":  cfg.DaemonIdleExit == r.cfg.DaemonIdleExit,
		"mcpx.store":           cfg.Store == r.cfg.Store,
		"mcpx.jobs":            cfg.Jobs == r.cfg.Jobs,
	} {
		if !same {
			out.Ignored = append(out.Ignored, name)
		}
	}
	r.cfg = cfg
	r.log.Info("config reloaded", "added", res.Added, "removed", res.Removed, "changed", res.Changed, "ignored", out.Ignored)
	return out, nil
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
		fi, err := os.Stat(r.cfg.File)
		r.mu.Lock()
		changed := err == nil && (r.stamp == nil || fi.Size() != r.stamp.Size() || !fi.ModTime().Equal(r.stamp.ModTime()))
		r.mu.Unlock()
		if changed {
			_, _ = r.reload()
		}
	}
}
