package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/localclient"
)

// configFlag declares --config on a verb.
func configFlag(fs *flag.FlagSet, dst *string) {
	fs.StringVar(dst, "config", "", "config `file` (default: $XDG_CONFIG_HOME/mcpx/config.json, else the built-in demo config)")
}

// loadConfig loads the config file named by path, else the default file,
// else the embedded default (the bundled demo upstream).
func loadConfig(env *Env, path string) (*config.Config, config.Paths, error) {
	paths, err := config.DefaultPaths(env.getenv)
	if err != nil {
		return nil, paths, err
	}
	if path == "" {
		def := paths.DefaultConfigFile()
		if _, err := os.Stat(def); errors.Is(err, fs.ErrNotExist) {
			return config.Default(env.Executable), paths, nil
		}
		path = def
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, paths, err
	}
	cfg, err := config.Load(abs, &config.LoadOptions{Lookup: env.LookupEnv, PerServer: true})
	return cfg, paths, err
}

// configVars returns the values this process's environment has for the
// ${VAR}s the config file at path names (unset ones left out): what mcpx
// reload hands the daemon, whose environment may lack them.
func configVars(env *Env, path string) map[string]string {
	vars := map[string]string{}
	// Every reference is looked up, set or not: an unset one reads as
	// empty here, so that the server's later references are reached too.
	_, _ = config.Load(path, &config.LoadOptions{PerServer: true, Lookup: func(name string) (string, bool) {
		v, ok := env.LookupEnv(name)
		if ok {
			vars[name] = v
		}
		return v, true
	}})
	return vars
}

// client returns a client for the daemon of cfg, without starting one.
func client(env *Env, cfg *config.Config, paths config.Paths) (*localclient.Client, config.DaemonFiles) {
	files := paths.Daemon(cfg.File, env.Build)
	return &localclient.Client{Socket: files.Socket, Version: env.Version}, files
}

// daemonOf loads the config at configPath (the default if "") and returns
// a client of its daemon, whether one runs or not, the daemon's files and
// the config.
func daemonOf(env *Env, configPath string) (*localclient.Client, config.DaemonFiles, *config.Config, error) {
	cfg, paths, err := loadConfig(env, configPath)
	if err != nil {
		return nil, config.DaemonFiles{}, nil, err
	}
	c, files := client(env, cfg, paths)
	return c, files, cfg, nil
}

// connectTo is connect for the config at configPath.
func connectTo(ctx context.Context, env *Env, configPath string) (*localclient.Client, error) {
	cfg, paths, err := loadConfig(env, configPath)
	if err != nil {
		return nil, err
	}
	return connect(ctx, env, cfg, paths)
}

// daemonStartWait is how long connect waits for a daemon it starts.
const daemonStartWait = 15 * time.Second

// connect returns a client of a running daemon for cfg, starting one in the
// background if none answers. A daemon that is dying (its socket resets
// connections) or stopping (it holds the lock a new one needs) is waited
// out: the start is retried until one answers or daemonStartWait has passed.
func connect(ctx context.Context, env *Env, cfg *config.Config, paths config.Paths) (*localclient.Client, error) {
	c, files := client(env, cfg, paths)
	deadline := time.Now().Add(daemonStartWait)
	var lastStart time.Time
	for wait := 5 * time.Millisecond; ; wait = min(wait*2, 200*time.Millisecond) {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.Status(pctx)
		cancel()
		if err == nil {
			return c, nil
		}
		var de *localclient.DaemonError
		if errors.As(err, &de) {
			return nil, err // a daemon answered, with an error
		}
		if time.Since(lastStart) > time.Second {
			lastStart = time.Now()
			if err := startDaemon(env, cfg, files); err != nil {
				return nil, err
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("the daemon did not start (see %s): %w", files.Log, err)
		}
		time.Sleep(wait)
	}
}

// startDaemon starts `mcpx daemon --background`, which starts the daemon
// detached (its own session, output to its log) and exits at once, so that
// the daemon is nobody's child here and outlives this process.
func startDaemon(env *Env, cfg *config.Config, files config.DaemonFiles) error {
	args := []string{"daemon", "--background"}
	if cfg.File != "" {
		args = append(args, "--config", cfg.File)
	}
	cmd := exec.Command(env.Executable, args...)
	cmd.Env = daemonEnv(env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimPrefix(strings.TrimSpace(string(out)), "mcpx: ")
		if msg == "" {
			msg = fmt.Sprintf("starting the daemon: %v (see %s)", err, files.Log)
		}
		return errors.New(msg)
	}
	return nil
}

// daemonEnv passes the XDG directories this process resolved, so that the
// daemon computes the same socket.
func daemonEnv(env *Env) []string {
	out := os.Environ()
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "HOME"} {
		if v := env.getenv(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// spawnDetached starts the real daemon in its own session with output to
// logFile, and returns once it serves, or with its start error.
func spawnDetached(env *Env, cfg *config.Config, logFile string) error {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o700); err != nil {
		return err
	}
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the daemon log: %w", err)
	}
	defer log.Close()
	args := []string{"daemon", "--log", logFile}
	if cfg.File != "" {
		args = append(args, "--config", cfg.File)
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	cmd := exec.Command(env.Executable, args...)
	cmd.Env = append(daemonEnv(env), readyEnv+"=3")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{readyW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		ready.Close()
		return fmt.Errorf("starting the daemon: %w", err)
	}
	if err := cmd.Process.Release(); err != nil {
		ready.Close()
		return err
	}
	return awaitReady(ready, logFile)
}
