package hostsurface

import (
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// fakeHost is a legacy session at the seam: its key, and the servers its
// filter lets it use. Only the methods log routing asks are answered.
type fakeHost struct {
	Host
	id, key string
	uses    []string
}

func (h *fakeHost) ID() string                { return h.id }
func (h *fakeHost) SessionKey() string        { return h.key }
func (h *fakeHost) MayUse(server string) bool { return slices.Contains(h.uses, server) }

// lines is a Stream that keeps what it is told.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) Notify(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, string(line))
}

func (l *lines) all() []string { l.mu.Lock(); defer l.mu.Unlock(); return slices.Clone(l.got) }

// TestLogMessageRouting: an upstream's log message goes, byte for byte, to
// each legacy session with a stream whose level admits it and whose
// filter lets it use the upstream; a perHost server's message goes to its
// own host alone, under the same rules; a session that stopped watching
// gets nothing.
func TestLogMessageRouting(t *testing.T) {
	var s Surface
	s.Init(nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	quiet := &fakeHost{id: "quiet", key: "k-quiet", uses: []string{"up"}} // level error
	plain := &fakeHost{id: "plain", key: "k-plain", uses: []string{"up"}} // default level (info)
	other := &fakeHost{id: "other", key: "k-other", uses: []string{"else"}}
	gone := &fakeHost{id: "gone", key: "k-gone", uses: []string{"up"}}
	streams := map[*fakeHost]*lines{}
	for _, h := range []*fakeHost{quiet, plain, other, gone} {
		streams[h] = &lines{}
		s.Watch(h, streams[h])
	}
	s.Watch(gone, nil)
	s.logs.byHost = map[Host]string{quiet: "error"}

	params := json.RawMessage(`{"level":"warning", "logger":"x","data":{"n":1}}`)
	want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning", "logger":"x","data":{"n":1}}}`
	s.Notified("up", &jsonrpc.Message{Method: mcp.MethodMessage, Params: params})
	s.HostLogMessage("up", "k-quiet", &jsonrpc.Message{Method: mcp.MethodMessage, Params: params})
	s.HostLogMessage("up", "k-plain", &jsonrpc.Message{Method: mcp.MethodMessage, Params: params})
	s.Notified("up", &jsonrpc.Message{Method: mcp.MethodMessage, Params: json.RawMessage(`{"level":"debug","data":1}`)})
	s.Notified("up", &jsonrpc.Message{Method: mcp.MethodMessage, Params: json.RawMessage(`{"level":"loud","data":1}`)})

	for h, wantLines := range map[*fakeHost][]string{
		quiet: nil,
		plain: {want, want},
		other: nil,
		gone:  nil,
	} {
		if got := streams[h].all(); !slices.Equal(got, wantLines) {
			t.Errorf("%s got %q, want %q", h.id, got, wantLines)
		}
	}
}
