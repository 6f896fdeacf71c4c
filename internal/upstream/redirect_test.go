package upstream

import (
	"net/http"
	"strings"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
)

// TestHTTPRedirectCrossOrigin: a 307 to another origin is refused with an
// error naming both URLs, and the other origin never sees the configured
// headers; a 307 within the origin is followed.
func TestHTTPRedirectCrossOrigin(t *testing.T) {
	other := newScripted(t, func(w http.ResponseWriter, in *inbound) {
		replyJSON(w, 200, result(in, `{"content":[]}`))
	})
	up := newScripted(t, nil)
	up.setHandler(legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		switch {
		case strings.Contains(string(in.Body), `"away"`):
			w.Header().Set("Location", other.ts.URL+"/mcp")
			w.WriteHeader(http.StatusTemporaryRedirect)
		case strings.Contains(string(in.Body), `"here"`) && in.URI != "/moved":
			w.Header().Set("Location", up.ts.URL+"/moved")
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			replyJSON(w, 200, result(in, `{"content":[{"type":"text","text":"ok"}]}`))
		}
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL, Headers: map[string]string{"X-Api-Key": "secret-key"}}, nil)
	s := session(t, p)

	_, err := call(t, s, mcp.MethodToolsCall, `{"name":"away"}`)
	if err == nil || !strings.Contains(err.Error(), up.ts.URL) || !strings.Contains(err.Error(), other.ts.URL+"/mcp") {
		t.Fatalf("a cross-origin redirect: err = %v, want a refusal naming both URLs", err)
	}
	for _, in := range other.requests() {
		t.Errorf("the other origin got %s %s with X-Api-Key %q", in.Method, in.URI, in.Header.Get("X-Api-Key"))
	}

	res, err := call(t, s, mcp.MethodToolsCall, `{"name":"here"}`)
	if err != nil || !strings.Contains(string(res), "ok") {
		t.Fatalf("a same-origin redirect: %s, %v; want it followed", res, err)
	}
	moved := up.waitFor("the redirected request", func(in *inbound) bool { return in.URI == "/moved" })
	if moved.Header.Get("X-Api-Key") != "secret-key" {
		t.Errorf("the same-origin redirect lost the configured header: %v", moved.Header)
	}
}
