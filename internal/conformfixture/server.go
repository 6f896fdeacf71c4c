package conformfixture

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a fixture; nil means defaults.
type Options struct {
	// Logger receives the SDK's log; nil discards it.
	Logger *slog.Logger
}

// Fixture is one conformance fixture server: its tools, prompts and
// resources, and the key that signs its requestState.
type Fixture struct {
	srv *mcp.Server
	key []byte
	log *slog.Logger
}

// New builds a fixture.
func New(opts *Options) *Fixture {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Fixture{key: make([]byte, 32), log: log}
	_, _ = rand.Read(f.key)
	f.srv = mcp.NewServer(&mcp.Implementation{Name: "mcpx-conformance-fixture", Version: "1.0.0"}, &mcp.ServerOptions{
		Logger:            log,
		CompletionHandler: complete,
		SubscribeHandler:  func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error {
			return nil
		},
		Capabilities: &mcp.ServerCapabilities{
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true},
		},
	})
	f.addTools()
	f.addInputRequiredTools()
	f.addTaskTools()
	f.addPrompts()
	f.addResources()
	return f
}

// Server is the fixture's go-sdk server.
func (f *Fixture) Server() *mcp.Server { return f.srv }

// ServeStdio serves the fixture on r and w (a child's stdin and stdout)
// until r ends or ctx is done.
func (f *Fixture) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return f.srv.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// Handler serves the fixture on Streamable HTTP: legacy sessions (with an
// in-memory event store, so streams resume by Last-Event-ID) and
// stateless 2026-07-28 requests, on one endpoint.
func (f *Fixture) Handler() http.Handler {
	legacy := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, &mcp.StreamableHTTPOptions{
		Logger:     f.log,
		EventStore: mcp.NewMemoryEventStore(nil),
	})
	modern := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, &mcp.StreamableHTTPOptions{
		Logger:                       f.log,
		Stateless:                    true,
		PropagateRequestCancellation: true,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isModern(r) {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

// isModern tells a 2026-07-28 request by its MCP-Protocol-Version header:
// the revisions before it keep sessions.
func isModern(r *http.Request) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	return v != "" && v >= "2026-07-28" || v != "" && !isDate(v)
}

func isDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range v {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
