package harness

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnectGoSDKHTTP connects a go-sdk client to mcpx's HTTP face at version,
// with mcpx's token. The session is closed at cleanup.
func ConnectGoSDKHTTP(t *testing.T, m *HTTPMCPX, version string, prog *ProgressLog) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: Bearer{m.Token, http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-e2e-gosdk-http", Version: "1"}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: prog.handle,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.URL, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s at %s: %v", m.URL, version, err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
	})
	return cs
}

// Bearer adds the token to every request.
type Bearer struct {
	Token string
	Next  http.RoundTripper
}

func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.Token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	return b.Next.RoundTrip(r)
}
