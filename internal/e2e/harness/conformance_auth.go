package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"

	"mcpx/internal/daemon"
)

// The conformance suite's auth/* client scenarios grade mcpx's upstream
// side as an OAuth client: the scenario's MCP server answers 401 until
// mcpx signs in with the scenario's authorization server, which approves
// at once and redirects to the redirect URI. The host configures nothing
// but what the scenario gives (pre-registered credentials, the client ID
// metadata document URL the suite expects), and mcpx signs in by itself
// with a headless user agent for a browser (daemon.Options.OAuthBrowser):
// it fetches the authorization URL and follows the redirects to mcpx's
// loopback listener, as a browser would after the user approved. The
// sign-ins go to the host's own state directory.

// ConformanceCIMD is the client ID metadata document URL the suite
// expects a client to use where the authorization server supports them.
const ConformanceCIMD = "https://conformance-test.local/client-metadata.json"

// AuthRefused are the auth scenarios in which mcpx must refuse to go on
// (a spec rule forbids it): the scenario's tool is then never listed or
// called, and mcpx's error is the expected outcome.
var AuthRefused = map[string]string{
	"auth/scope-retry-limit":        "the server refuses every scope: mcpx stops asking after the challenge repeats the scopes it was granted",
	"auth/resource-mismatch":        "the protected resource metadata names another resource (RFC 9728 §3.3)",
	"auth/metadata-issuer-mismatch": "the authorization server metadata names another issuer (RFC 8414 §3.3)",
	"auth/iss-wrong-issuer":         "the redirect's iss is another issuer (RFC 9207)",
	"auth/iss-supported-missing":    "the server says it sends iss and the redirect has none (RFC 9207)",
	"auth/iss-normalized":           "the redirect's iss differs from the issuer only by URL normalization, which the spec forbids applying",
	"auth/iss-unexpected":           "the redirect's iss does not match the issuer (RFC 9207)",
}

// AuthHostCalls are an auth scenario's calls: its one tool, or none when
// mcpx must refuse.
func AuthHostCalls(scenario string) []ConformanceHostCall {
	if _, ok := AuthRefused[scenario]; ok {
		return []ConformanceHostCall{{Tool: "test-tool", Args: json.RawMessage(`{}`), Refused: true}}
	}
	return []ConformanceHostCall{{Tool: "test-tool", Args: json.RawMessage(`{}`), WantText: "test"}}
}

// AuthHostSetup adds the sign-in to an auth scenario's host: the server's
// oauth settings from the scenario's context, and the headless browser.
func AuthHostSetup(scenario, ctxJSON, dir string, server map[string]any, opts *daemon.Options) error {
	if !strings.HasPrefix(scenario, "auth/") {
		return nil
	}
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if ctxJSON != "" {
		if err := json.Unmarshal([]byte(ctxJSON), &c); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	o := map[string]any{"clientMetadataUrl": ConformanceCIMD}
	if c.ClientID != "" {
		o["clientId"], o["clientSecret"] = c.ClientID, c.ClientSecret
	}
	server["oauth"] = o
	opts.OAuthDir = filepath.Join(dir, "oauth")
	opts.OAuthBrowser = HeadlessBrowser
	return nil
}

// HeadlessBrowser is a user agent that approves at once: it fetches the
// authorization URL and follows its redirects, the last to mcpx's
// loopback listener.
func HeadlessBrowser(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	jar, _ := cookiejar.New(nil) // the sign-in's redirect is taken from the browser that started it
	resp, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the authorization flow ended with HTTP %d at %s", resp.StatusCode, resp.Request.URL.Redacted())
	}
	return nil
}
