package hosthttp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
)

// TestKeptResultLogsNoContent: the result of a call whose host left is
// logged by its size, id and tool, never its content, at any level above
// debug.
func TestKeptResultLogsNoContent(t *testing.T) {
	var out bytes.Buffer
	s := &Stream{log: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo})),
		host: "http-1", tool: "export", id: jsonrpc.NewStringID("drop-1")}
	secret := "the user's private records"
	s.kept([]byte(`{"jsonrpc":"2.0","id":"drop-1","result":{"content":[{"type":"text","text":"` + secret + `"}]}}`))
	s.kept([]byte(`{"jsonrpc":"2.0","id":"drop-2","error":{"code":-32000,"message":"` + secret + `"}}`))
	logged := out.String()
	if strings.Contains(logged, secret) || strings.Count(logged, "bytes=") != 2 || !strings.Contains(logged, "drop-1") {
		t.Fatalf("the kept results' log lines:\n%s\nwant their sizes and ids, not their content", logged)
	}
}
