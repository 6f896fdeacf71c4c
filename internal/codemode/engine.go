package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/catalog"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/sandbox"
)

// Options configure an Engine; zero durations take the defaults.
type Options struct {
	Relay   *relay.Relay
	Catalog *catalog.Catalog
	Pool    *sandbox.Pool
	Limits  sandbox.Limits
	// IdleTimeout ends a script that shows no activity for this long.
	IdleTimeout time.Duration
	// MaxTimeout is a script's hard maximum; a script may ask for less.
	MaxTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultIdleTimeout = 60 * time.Second
	DefaultMaxTimeout  = 10 * time.Minute
)

// Engine runs scripts.
type Engine struct {
	o    Options
	next atomic.Uint64
}

// New returns an Engine.
func New(o Options) *Engine {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	return &Engine{o: o}
}

// Script is one script to run.
type Script struct {
	Code string
	// Timeout is the hard maximum the caller asks for: it can only
	// shorten the engine's.
	Timeout time.Duration
	// Name names the script in the causes its inner calls end with; ""
	// gets one of the engine's ("script-7").
	Name string
	// Host and SessionKey are the relay.Call fields of its inner calls.
	Host, SessionKey string
	// Person is the relay.Call field of its inner calls: whom they act
	// for on per-person servers.
	Person string
	// Progress receives the script's progress() calls whose value
	// increases, in order; nil drops them. It must not block.
	Progress func(value float64, total *float64, message string)
	// Allow, if not nil, says whether the script may call server's tool
	// and find it with mcpx.search: its host's tool filter. The error is
	// what the script's call throws.
	Allow func(server, tool string) error
	// Who is the principal the script runs for, for the audit log's
	// records of its inner calls.
	Who principal.Principal
}

// Outcome is how a script ended, short of its caller giving up.
type Outcome struct {
	Value   json.RawMessage // the script's value as JSON; nil for undefined
	Console []string
	Calls   int
	// Err is why the script failed: a *sandbox.ScriptError, a
	// *sandbox.LimitError, a *StopError for its timeouts.
	Err error
}

// StopError is the cause of an inner call cancelled because its script
// stopped, and of a script stopped by its timeouts.
type StopError struct {
	Script string
	Why    error
}

func (e *StopError) Error() string { return "script " + e.Script + " stopped: " + e.Why.Error() }
func (e *StopError) Unwrap() error { return e.Why }

// ErrScriptEnded is why a script's inner calls still running when it
// returned or failed are cancelled.
var ErrScriptEnded = errors.New("the script ended before its call did")

// Exec runs s. It returns an error only when ctx ended first: then ctx's
// cause. Whatever else ends the script is in the Outcome.
func (e *Engine) Exec(ctx context.Context, s Script) (*Outcome, error) {
	if s.Name == "" {
		s.Name = "script-" + strconv.FormatUint(e.next.Add(1), 10)
	}
	sctx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	unhook := context.AfterFunc(ctx, func() { stop(&StopError{Script: s.Name, Why: context.Cause(ctx)}) })
	defer unhook()
	max := e.o.MaxTimeout
	if s.Timeout > 0 && s.Timeout < max {
		max = s.Timeout
	}
	t := startTimers(e.o.IdleTimeout, max, func(c *relay.Cause) { stop(&StopError{Script: s.Name, Why: c}) })
	defer t.stop()
	h := &host{e: e, s: &s, t: t}
	res, err := e.o.Pool.Exec(sctx, sandbox.Script{Code: s.Code, Prelude: prelude, Limits: e.o.Limits,
		EndCause: &StopError{Script: s.Name, Why: ErrScriptEnded}}, h)
	out := &Outcome{Value: res.Value, Console: res.Console, Calls: res.Calls, Err: err}
	if err != nil && ctx.Err() != nil {
		return out, context.Cause(ctx)
	}
	return out, nil
}

// timers are a script's idle timer, which activity resets, and its hard
// maximum, which nothing extends.
type timers struct {
	mu    sync.Mutex
	idle  time.Duration
	it    *time.Timer
	hard  *time.Timer
	ended bool
}

func startTimers(idle, max time.Duration, fire func(*relay.Cause)) *timers {
	t := &timers{idle: idle}
	t.it = time.AfterFunc(idle, func() { fire(&relay.Cause{Kind: relay.IdleTimeout, After: idle}) })
	t.hard = time.AfterFunc(max, func() { fire(&relay.Cause{Kind: relay.HardTimeout, After: max}) })
	return t
}

// touch restarts the idle interval.
func (t *timers) touch() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.it.Reset(t.idle)
	}
}

func (t *timers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	t.it.Stop()
	t.hard.Stop()
}
