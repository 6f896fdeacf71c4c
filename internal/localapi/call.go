package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
)

var errNoSuchCall = errors.New("no such call in flight")

// maxBody bounds request bodies of the local API.
const maxBody = 16 << 20

func decodeBody(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(v)
}

// cancelCause is the cause of a cancellation asked for through the API.
func cancelCause(reason string) error {
	if reason == "" || reason == "user" {
		return &relay.Cause{Kind: relay.UserInterrupt}
	}
	return &relay.Cause{Kind: relay.HostCancelled, Detail: reason}
}

var apiClients atomic.Uint64

// readCall reads a call request: the tool it names, resolved to its
// server and upstream name, and its arguments as the call's params.
func (h *Handler) readCall(r *http.Request) (req apitype.CallRequest, server, tool string, params *jsonrpc.Object, err error) {
	if err := decodeBody(r, &req); err != nil {
		return req, "", "", nil, statusErr(http.StatusBadRequest, fmt.Errorf("reading call request: %w", err))
	}
	server, tool, ok := h.resolve(r.Context(), req.Tool)
	if !ok {
		return req, "", "", nil, statusErr(http.StatusNotFound, h.unknownTool(req.Tool))
	}
	if err := h.policy(r).Decide(principal.CallTool, principal.Target{Name: req.Tool, Server: server, Tool: tool}); err != nil {
		return req, "", "", nil, refusal(err)
	}
	params = &jsonrpc.Object{}
	if len(req.Arguments) > 0 {
		if _, err := jsonrpc.ParseObject(req.Arguments); err != nil || !json.Valid(req.Arguments) {
			return req, "", "", nil, statusErr(http.StatusBadRequest, errors.New("arguments must be a JSON object"))
		}
		params.Set("arguments", req.Arguments)
	}
	return req, server, tool, params, nil
}

// serveCall runs one tool call and streams its events as NDJSON. The client
// closing the stream cancels the call ("the client disconnected").
func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request) error {
	req, server, tool, params, err := h.readCall(r)
	if err != nil {
		return err
	}
	// A tool its server does not list is as unknown as a server: the
	// caller's mistake (a server that cannot be listed gets the call,
	// whose error says why).
	if has, listed := h.catalog.HasTool(r.Context(), server, tool); listed && !has {
		return statusErr(http.StatusNotFound, fmt.Errorf("unknown tool %q: server %q has no tool %q (see mcpx tools)", req.Tool, server, tool))
	}
	if req.JobAfterMs < 0 {
		return statusErr(http.StatusBadRequest, errors.New("jobAfterMs must not be negative"))
	}
	// A daemon that keeps no jobs runs such a call as any other, as it
	// does for a principal who may start none: the client's timer may
	// end it.
	if m := h.opts.Jobs; req.JobAfterMs > 0 && m != nil && startRefusal(h.policy(r), req.Tool, server, tool) == nil {
		return h.serveCallJob(w, r, m, req, server, tool, params)
	}

	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	stop := context.AfterFunc(r.Context(), func() { cancel(&relay.Cause{Kind: relay.ClientDisconnected, Detail: clientName(req.Client)}) })
	defer stop()
	entry, call, st, err := h.apiCall(principal.From(r.Context()), req, server, tool, params, cancel)
	if err != nil {
		return err
	}
	defer h.relay.Registry().Remove(entry)
	type outcome struct {
		res json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.relay.CallTool(ctx, entry, call)
		done <- outcome{res, err}
	}()

	started := apitype.CallEvent{Type: "started", CallID: entry.ID, Server: server, Tool: tool}
	streamEvents(w, h.relay.Registry(), entry, st, started, done, func(emit func(apitype.CallEvent), o outcome) {
		emit(finalEvent(o.res, o.err, server))
	})
	return nil
}

// apiCall registers a call of the local API for who (its registry
// entry's cancel is cancel; the caller removes the entry) and makes its
// relay.Call, whose progress st keeps.
func (h *Handler) apiCall(who principal.Principal, req apitype.CallRequest, server, tool string, params *jsonrpc.Object, cancel context.CancelCauseFunc) (*relay.Entry, relay.Call, *progressSlot, error) {
	host := relay.HostKey{Session: "cli-" + strconv.FormatUint(apiClients.Add(1), 10), ID: "1"}
	entry, err := h.relay.Registry().AddFor(who.ID(), host, mcp.MethodToolsCall, cancel, 0)
	if err != nil {
		return nil, relay.Call{}, nil, err
	}
	st := &progressSlot{wake: make(chan struct{}, 1)}
	return entry, relay.Call{
		Server: server, Tool: tool, Params: params,
		HostToken:   json.RawMessage(`"cli"`),
		Person:      who.ID(),
		Progress:    st.set,
		IdleTimeout: time.Duration(req.IdleTimeoutMs) * time.Millisecond,
		MaxTimeout:  time.Duration(req.MaxTimeoutMs) * time.Millisecond,
		Who:         who,
	}, st, nil
}

// streamEvents writes a streamed call's events as NDJSON: started, its
// progress as it comes, and once the call is done its last progress and
// the events final makes of its outcome. The call leaves the registry
// before the client hears the end, so that a status it asks for next no
// longer shows the call.
func streamEvents[T any](w http.ResponseWriter, reg *relay.Registry, entry *relay.Entry, st *progressSlot,
	started apitype.CallEvent, done <-chan T, final func(emit func(apitype.CallEvent), o T)) {
	emit := callEvents(w)
	emit(started)
	for {
		select {
		case <-st.wake:
			st.send(emit)
		case o := <-done:
			reg.Remove(entry)
			st.send(emit)
			final(emit, o)
			return
		}
	}
}

// ndjson starts an NDJSON stream on w and returns the writer of its
// lines, each flushed at once so that the client sees it as it comes.
func ndjson[T any](w http.ResponseWriter) func(T) error {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	enc := json.NewEncoder(w)
	rc := http.NewResponseController(w)
	return func(v T) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		return rc.Flush()
	}
}

// callEvents starts a call's event stream on w. A failed write is not
// reported: the client has gone, and its going cancels the call.
func callEvents(w http.ResponseWriter) func(apitype.CallEvent) {
	write := ndjson[apitype.CallEvent](w)
	return func(ev apitype.CallEvent) { _ = write(ev) }
}

// progressSlot keeps the latest progress of a call for a client that reads
// at its own pace: a progress bar only needs the newest value.
type progressSlot struct {
	mu   sync.Mutex
	p    *apitype.Progress
	wake chan struct{}
}

func (s *progressSlot) set(params json.RawMessage) {
	var p mcp.ProgressParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	s.p = &apitype.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// send emits the latest progress as a "progress" event, if there is one
// not yet sent, and reports whether there was.
func (s *progressSlot) send(emit func(apitype.CallEvent)) bool {
	s.mu.Lock()
	p := s.p
	s.p = nil
	s.mu.Unlock()
	if p != nil {
		emit(apitype.CallEvent{Type: "progress", Progress: p})
	}
	return p != nil
}

func finalEvent(res json.RawMessage, err error, server string) apitype.CallEvent {
	if err == nil {
		var r struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(res, &r)
		code := apitype.ExitOK
		if r.IsError {
			code = apitype.ExitToolError
		}
		return apitype.CallEvent{Type: "result", Result: res, IsError: r.IsError, ExitCode: &code}
	}
	rpcErr, kind := relay.RPCError(err, server)
	code := apitype.ExitCodeOf(kind)
	return apitype.CallEvent{Type: "error", ExitCode: &code, Error: &apitype.CallError{
		Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data, Kind: kind,
	}}
}

// clientName is a client's self-chosen name as it may appear in a reason
// sent upstream: printable, at most 64 bytes.
func clientName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "")
	}
	return s
}

// resolve accepts "server.tool" besides exposed names.
// unknownTool says why name names no tool: its server is not configured,
// or there is no such server (naming those there are), or the server has
// no such tool.
func (h *Handler) unknownTool(name string) error {
	srv, _, dotted := strings.Cut(name, ".")
	if !dotted {
		return fmt.Errorf("unknown tool %q (see mcpx tools)", name)
	}
	if why, ok := h.unconfigured()[srv]; ok {
		return fmt.Errorf("unknown tool %q: server %q is not configured: %s", name, srv, why)
	}
	cfg := h.relay.Config()
	if cfg == nil {
		return fmt.Errorf("unknown tool %q (see mcpx tools)", name)
	}
	if _, ok := cfg.Servers[srv]; ok {
		return fmt.Errorf("unknown tool %q (see mcpx tools)", name)
	}
	var names []string
	for _, n := range cfg.Names() {
		if !cfg.Servers[n].Disabled {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("unknown tool %q: no server %q, and the config has none enabled", name, srv)
	}
	return fmt.Errorf("unknown tool %q: no server %q (the servers are %s; see mcpx tools)", name, srv, strings.Join(names, ", "))
}

func (h *Handler) resolve(ctx context.Context, name string) (server, tool string, ok bool) {
	if i := strings.IndexByte(name, '.'); i > 0 && h.catalog.HasServer(name[:i]) {
		return name[:i], name[i+1:], name[i+1:] != ""
	}
	return h.catalog.Resolve(ctx, name)
}
