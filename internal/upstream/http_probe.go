package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// defaultMaxConcurrentRequests is the number of requests in flight to one
// HTTP server when its config sets none.
const defaultMaxConcurrentRequests = 16

// httpDialer settles how to speak to an HTTP server and leaves the session
// connected by the transport of that era. Each attempt replaces the
// session's connection and transport (stopping the previous one); on
// failure the last attempt's stays for the caller to stop.
type httpDialer struct {
	s  *Session
	tg *httpTarget
	// corrected: a -32022 has already been answered by trying again.
	corrected bool
}

// dialHTTP connects s to srv's URL: in the era and revision the config
// names, else the one cached for its origin, else the one a probe finds
// (docs/protocol-notes.md §6.4). A cached era that fails to start is
// forgotten and the server probed again.
func dialHTTP(ctx context.Context, s *Session, srv *config.Server, opts dialOptions, wg *sync.WaitGroup) (*slog.Logger, error) {
	log := opts.log.With("server", srv.Name)
	limit := opts.maxMessage
	if limit <= 0 {
		limit = jsonrpc.DefaultMaxMessageBytes
	}
	slots := srv.MaxConcurrentRequests
	if slots <= 0 {
		slots = defaultMaxConcurrentRequests
	}
	d := &httpDialer{s: s, tg: &httpTarget{
		server: srv.Name, url: srv.URL, headers: srv.Headers, client: opts.http.clientFor(srv, opts.person),
		limit: limit, slots: slots, log: log, poolWG: wg,
	}}
	version := srv.ProtocolVersion
	switch {
	case srv.Transport == config.TransportSSE:
		if mcp.IsModern(version) {
			return log, fmt.Errorf("protocol version %s is not spoken over HTTP+SSE", version)
		}
		if version == "" {
			version = mcp.LatestLegacy
		}
		return log, d.sse(ctx, version)
	case mcp.IsModern(version):
		modern, err := d.modern(ctx, version, 0)
		if err == nil && !modern {
			err = fmt.Errorf("upstream %q does not speak protocol version %s", srv.Name, version)
		}
		return log, err
	case version != "":
		return log, d.legacy(ctx, version)
	}

	key := originKey(srv.URL)
	if era, ok := opts.http.era(key); ok {
		err := d.cached(ctx, era)
		if err == nil || ctx.Err() != nil {
			return log, err
		}
		log.Info("the cached era failed; probing the server again", "era", era.kind, "err", err)
		opts.http.forget(key)
	}
	era, err := d.probe(ctx, opts.probeTimeout)
	if err == nil {
		opts.http.remember(key, era)
		log.Debug("settled the HTTP era", "era", era.kind, "version", s.version)
	}
	return log, err
}

// use replaces the session's transport by a new one of kind.
func (d *httpDialer) use(kind eraKind, version string) {
	s := d.s
	if s.t != nil {
		s.stop()
	}
	conn := newConn(s.Server, d.tg.log)
	conn.onNotify = s.notify
	base := newHTTPBase(d.tg, conn)
	var t transport
	switch kind {
	case eraModern:
		t = &modernTransport{httpBase: base, version: version}
	case eraLegacy:
		t = &legacyTransport{httpBase: base}
	case eraSSE:
		t = &sseTransport{httpBase: base}
	}
	conn.t = t
	s.conn, s.t, s.done = conn, t, base.done
	s.version, s.capabilities, s.serverInfo, s.instructions = "", nil, mcp.Implementation{}, ""
}

func (d *httpDialer) cached(ctx context.Context, era httpEra) error {
	switch era.kind {
	case eraModern:
		modern, err := d.modern(ctx, era.version, 0)
		if err == nil && !modern {
			err = errors.New("the server no longer answers as a 2026-07-28 server")
		}
		return err
	case eraLegacy:
		return d.legacy(ctx, mcp.LatestLegacy)
	default:
		return d.sse(ctx, mcp.LatestLegacy)
	}
}

// probe finds the era by the answers' bodies, never by one status code:
// server/discover with the modern headers first; a DiscoverResult or a
// recognized modern error means modern; anything else, initialize (legacy
// Streamable HTTP); a 400, 404 or 405 to that without a JSON-RPC body,
// HTTP+SSE.
func (d *httpDialer) probe(ctx context.Context, timeout time.Duration) (httpEra, error) {
	modern, err := d.modern(ctx, mcp.Latest, timeout)
	switch {
	case err != nil:
		return httpEra{}, err
	case modern:
		return httpEra{kind: eraModern, version: d.s.version}, nil
	}
	err = d.legacy(ctx, mcp.LatestLegacy)
	if err == nil {
		return httpEra{kind: eraLegacy}, nil
	}
	if v := modernOnly(err); v != "" {
		// Not modern in time, but it refuses initialize naming modern
		// revisions: modern after all.
		if modern, err := d.modern(ctx, v, 0); err != nil || !modern {
			return httpEra{}, cmpErr(err, "the server names modern revisions but does not answer server/discover")
		}
		return httpEra{kind: eraModern, version: d.s.version}, nil
	}
	var he *HTTPError
	if !errors.As(err, &he) || he.RPC != nil || !slices.Contains([]int{http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed}, he.Status) {
		return httpEra{}, err
	}
	if err := d.sse(ctx, mcp.LatestLegacy); err != nil {
		return httpEra{}, fmt.Errorf("%w (after initialize was refused: %v)", err, he)
	}
	return httpEra{kind: eraSSE}, nil
}

func cmpErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

// modern connects the session as a 2026-07-28 client at version and asks
// server/discover, within timeout when it is set (a probe). It reports
// whether the server is modern: an answer that does not say so is no
// error, unless the server could not be reached at all or refused mcpx's
// credentials; a recognized modern error that still leaves no way to
// speak to the server is.
func (d *httpDialer) modern(ctx context.Context, version string, timeout time.Duration) (bool, error) {
	d.use(eraModern, version)
	s := d.s
	s.version = version
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		pctx, cancel = context.WithTimeout(ctx, timeout)
	}
	res, err := s.discover(pctx)
	cancel()
	if err == nil {
		if slices.Contains(res.SupportedVersions, version) {
			s.adoptDiscover(res)
			return true, nil
		}
		if v := newestModern(res.SupportedVersions); v != "" {
			return d.modern(ctx, v, 0)
		}
		return false, nil // it names legacy revisions only
	}
	var (
		rpcErr *jsonrpc.Error
		he     *HTTPError
	)
	errors.As(err, &he)
	switch {
	case errors.As(err, &rpcErr):
		switch rpcErr.Code {
		case mcp.CodeUnsupportedProtocolVersion:
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(rpcErr.Data, &data)
			v := newestModern(data.Supported)
			switch {
			case v != "" && !d.corrected:
				// The spec's client SHOULD retry with a revision the
				// server lists: once, with the newest both speak, even
				// the one just refused (a server may refuse it only
				// this once, one behind a balancer mid-upgrade), as the
				// TypeScript SDK does; a second refusal ends it.
				d.corrected = true
				return d.modern(ctx, v, 0)
			case v != "":
				return true, fmt.Errorf("server/discover: %w", err)
			}
			return false, nil
		case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredCapability:
			return true, fmt.Errorf("the server speaks 2026-07-28 but refused server/discover: %w", err)
		case jsonrpc.CodeMethodNotFound:
			if he != nil && he.Status == http.StatusNotFound {
				// A modern server without server/discover: modern, and
				// nothing more known of it.
				s.capabilities = json.RawMessage("{}")
				return true, nil
			}
		}
		return false, nil
	case he != nil:
		if he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden {
			return false, err
		}
		return false, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return false, nil // no answer in time: a legacy server ignoring the method
	}
	var re *reachError
	if errors.As(err, &re) || ctx.Err() != nil {
		return false, err // unreachable, or the start's own deadline
	}
	return false, nil // an answer that is not a modern one
}

// legacy connects the session as a Streamable HTTP client of the
// initialize-based revisions and runs initialize.
func (d *httpDialer) legacy(ctx context.Context, version string) error {
	d.use(eraLegacy, "")
	return d.s.initialize(ctx, version)
}

// sse connects the session by HTTP+SSE and runs initialize.
func (d *httpDialer) sse(ctx context.Context, version string) error {
	d.use(eraSSE, "")
	if err := d.s.t.(*sseTransport).open(ctx); err != nil {
		return err
	}
	return d.s.initialize(ctx, version)
}
