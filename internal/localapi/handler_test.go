package localapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/catalog"
	"mcpx/internal/config"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

func newTestHandler(t *testing.T) *Handler {
	t.Helper()
	cfg := config.Default("/nonexistent/mcpx")
	pool := upstream.NewPool(cfg, nil)
	r := relay.New(cfg, pool, relay.NewRegistry(), nil)
	return New(r, catalog.New(pool, catalog.Naming{}, nil), &Options{Version: "test"})
}

// TestBrowserRequestsRefused: the local API serves only the mcpx command.
// Anything a web page could make a browser send (an Origin or Referer
// header, or a Host other than the socket's fake one, as DNS rebinding
// would give) is refused before any handler runs.
func TestBrowserRequestsRefused(t *testing.T) {
	h := newTestHandler(t)
	for _, tc := range []struct {
		name   string
		host   string
		header map[string]string
		want   int
	}{
		{"the mcpx client", apitype.Host, nil, http.StatusOK},
		{"an Origin header", apitype.Host, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"a null Origin", apitype.Host, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"a Referer header", apitype.Host, map[string]string{"Referer": "http://evil.example/page"}, http.StatusForbidden},
		{"a foreign Host", "evil.example", nil, http.StatusForbidden},
		{"localhost as Host", "localhost", nil, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://"+tc.host+apitype.PathStatus, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body)
			}
			if got := rec.Header().Get(apitype.HeaderVersion); got != "test" {
				t.Errorf("%s = %q, want test", apitype.HeaderVersion, got)
			}
			if tc.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "forbidden") {
				t.Errorf("body = %s, want a JSON error saying forbidden", rec.Body)
			}
		})
	}
}

// TestUnknownRoutesAndMethods: wrong paths and methods get errors, not a
// handler.
func TestUnknownRoutesAndMethods(t *testing.T) {
	h := newTestHandler(t)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, apitype.PathStatus, http.StatusMethodNotAllowed},
		{http.MethodGet, "/v0/nope", http.StatusNotFound},
		{http.MethodGet, apitype.PathStdio, http.StatusUpgradeRequired},
		{http.MethodPost, "/v0/calls/notanumber/cancel", http.StatusBadRequest},
		{http.MethodPost, "/v0/calls/12345/cancel", http.StatusNotFound},
	} {
		req := httptest.NewRequest(tc.method, "http://"+apitype.Host+tc.path, strings.NewReader("{}"))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %s: status = %d, want %d; body %s", tc.method, tc.path, rec.Code, tc.want, rec.Body)
		}
	}
}
