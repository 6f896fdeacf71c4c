package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// errStopping is the cause of every request context once Serve stops.
var errStopping = errors.New("demo server stopping: input closed")

// server is one Serve call's state.
type server struct {
	cfg  *config
	log  *slog.Logger
	out  *jsonrpc.Writer
	rec  *recorder
	wire *wireLog // nil without Options.WireLog
	wg   sync.WaitGroup

	tools   []tool // what tools/list lists and tools/call runs
	session string // over HTTP, the legacy session it serves; "" otherwise

	mu    sync.Mutex
	calls map[string]*call // guarded by mu; requests in flight by raw id text

	// The surface's state (surface.go), guarded by mu.
	surfaceGrown bool
	subscribed   map[string]bool
	listens      map[*demoListen]bool // 2026-07-28 subscriptions (listen.go)
	logLevel     string

	questions jsonrpc.Pending // the ask tool's requests to the client

	gates    map[string]*gate // the gated tool's URL elicitations, by gate name; guarded by mu
	stopping <-chan struct{}  // closed when serving ends: the gated tool's timers stop

	tasks demoTasks // the research tool's tasks (tasks.go)
}

// Serve runs the demo server on newline-delimited JSON-RPC: it reads r and
// writes w (which it does not close). It returns nil at the end of r or
// when ctx is cancelled, after cancelling every running request and waiting
// for all the goroutines it started. To unblock a read in progress when
// ctx is cancelled, Serve sets a read deadline on r if r supports one, else
// closes r if it is an [io.Closer]. A nil opts means the defaults.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts *Options) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	rec, err := openRecorder(cfg)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer rec.close()
	wire, err := openWireLog(cfg.WireLog)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer wire.close()
	if wire != nil {
		w = loggedWriter{w: w, log: wire}
	}
	s := &server{cfg: cfg, log: cfg.Logger, out: jsonrpc.NewWriter(w), rec: rec, wire: wire, calls: map[string]*call{}, tools: cfg.toolsOf(tools)}
	if cfg.Tasks {
		s.tools = append(slices.Clip(s.tools), taskTools...)
	}
	s.log.Info("serving", "era", cfg.Era, "versions", cfg.supported)

	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s.stopping = ctx.Done()
	readDone := make(chan struct{})
	s.wg.Go(func() {
		select {
		case <-ctx.Done():
			unblock(r)
		case <-readDone:
		}
	})
	err = s.read(ctx, r)
	close(readDone)
	stop(errStopping)
	s.wg.Wait()
	s.log.Info("stopped")
	return err
}

// unblock makes a pending Read of r return.
func unblock(r io.Reader) {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Now()) == nil {
		return
	}
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}

// read handles lines until the end of r or ctx is done.
func (s *server) read(ctx context.Context, r io.Reader) error {
	rd := jsonrpc.NewReader(r, 0)
	for ctx.Err() == nil {
		line, err := rd.ReadLine()
		var over *jsonrpc.OversizeError
		switch {
		case errors.As(err, &over):
			s.log.Warn("oversize message", "id", over.ID.String())
			s.out.Write(jsonrpc.NewError(over.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: %v", over)))
			continue
		case errors.Is(err, io.EOF):
			s.log.Info("input closed")
			return nil
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("demo: reading input: %w", err)
		}
		s.wire.line("< ", line)
		s.handle(ctx, line)
	}
	return nil
}

// handle acts on one line: requests start a goroutine, notifications are
// handled in line, responses are ignored.
func (s *server) handle(ctx context.Context, line []byte) {
	m, err := jsonrpc.Decode(line)
	if errors.Is(err, jsonrpc.ErrBatch) {
		s.out.Write(jsonrpc.NewError(jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported")))
		return
	}
	var bad *jsonrpc.Error
	if errors.As(err, &bad) {
		s.log.Warn("bad message", "err", bad.Message)
		if m.Method != "" && !m.ID.IsValid() {
			return // a malformed notification: never answered
		}
		s.out.Write(jsonrpc.NewError(m.ID, bad))
		return
	}
	switch {
	case m.IsRequest():
		s.start(ctx, m)
	case m.Method == mcp.MethodCancelled:
		s.cancelled(m.Params)
	case m.IsNotification():
		s.log.Debug("notification", "method", m.Method)
	case s.questions.Answer(m):
	default:
		s.log.Debug("ignoring a response", "id", m.ID.String())
	}
}

// start registers a request, so that a cancel on the next line finds it,
// and runs it on its own goroutine.
func (s *server) start(ctx context.Context, m *jsonrpc.Message) {
	req := parseRequest(m)
	c := &call{id: m.ID, method: m.Method, tool: req.name, token: req.token, start: time.Now(), out: s.out}
	c.stubborn = m.Method == mcp.MethodInitialize || m.Method == mcp.MethodToolsCall && req.name == "stubborn"
	s.record(Event{Event: EventRequest, ID: m.ID.Raw(), Method: m.Method, Tool: req.name, ProgressToken: req.token, Meta: req.meta})
	s.log.Debug("request", "id", m.ID.String(), "method", m.Method, "tool", req.name)
	if !s.register(c) {
		s.out.Write(jsonrpc.NewError(m.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: id %s is in use by a running request", m.ID)))
		return
	}
	rctx := ctx
	if !c.stubborn {
		rctx, c.cancel = context.WithCancelCause(ctx)
	}
	s.wg.Go(func() {
		if c.cancel != nil {
			defer c.cancel(nil)
		}
		s.run(rctx, c, req)
	})
}

// run serves one request and sends its response, unless it was cancelled.
func (s *server) run(ctx context.Context, c *call, req *request) {
	result, err := s.dispatch(ctx, c, req)
	var m *jsonrpc.Message
	var rpcErr *jsonrpc.Error
	outcome := OutcomeResult
	switch {
	case errors.Is(err, errExited):
		s.respond(c, nil)
		return
	case errors.Is(err, errIgnored):
		outcome = OutcomeIgnored
	case errors.As(err, &rpcErr):
		m, outcome = jsonrpc.NewError(c.id, rpcErr), OutcomeError
	case err != nil && ctx.Err() != nil:
		outcome = OutcomeShutdown // or cancelled, below
	case err != nil:
		m, outcome = jsonrpc.NewError(c.id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error: %v", err)), OutcomeError
	default:
		m = jsonrpc.NewResult(c.id, result)
	}
	if !s.respond(c, m) && outcome != OutcomeIgnored {
		outcome = OutcomeShutdown
		if c.wasCancelled() {
			outcome = OutcomeCancelled
		}
	}
	elapsed := time.Since(c.start).Milliseconds()
	s.record(Event{Event: EventFinished, ID: c.id.Raw(), Method: c.method, Tool: c.tool, Outcome: outcome, ElapsedMs: &elapsed})
	s.log.Debug("finished", "id", c.id.String(), "method", c.method, "tool", c.tool, "outcome", outcome, "ms", elapsed)
}

// record adds e to the record, stamped with the session it belongs to.
func (s *server) record(e Event) {
	e.Session = s.session
	s.rec.add(e)
}
