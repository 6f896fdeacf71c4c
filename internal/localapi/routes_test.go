package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/catalog"
	"mcpx/internal/config"
	"mcpx/internal/oauth"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// routePolicies is every route of the local API with the operation its
// principal's policy decides. A route added to routes() without a line
// here, or with another operation, fails TestEveryRouteHasItsPolicy; one
// without an operation at all makes New panic.
//
// Operate routes are refused to every principal but the local user
// before their handler runs. The others decide what the request names:
// CallTool the tool (403 if refused); ReadJob and CancelJob the job
// (404 for another principal's, 403 if its tool is refused); CancelCall
// the call (404 for another principal's); ReadStatus narrows the status
// to the principal's own calls and jobs; StartJob the tool, then whether
// the principal may start a job (403). A route that may start a job
// besides its own operation (a call past JobAfterMs, a background
// script) asks StartJob too. RevokeSignIn decides whose sign-in (404
// for another principal's, but for the local user); SignIn is the
// browser's pages, whose principal is the one their sign-in state was
// bound to (signin.go).
var routePolicies = map[string]principal.Op{
	"GET " + apitype.PathStatus:       principal.ReadStatus,
	"GET " + apitype.PathTools:        principal.CallTool,
	"POST " + apitype.PathCall:        principal.CallTool,
	"POST " + apitype.PathExec:        principal.CallTool,
	"POST " + apitype.PathCancel:      principal.CancelCall,
	"POST " + apitype.PathShutdown:    principal.Operate,
	"POST " + apitype.PathReload:      principal.Operate,
	"POST " + apitype.PathRestart:     principal.Operate,
	"POST " + apitype.PathUILink:      principal.Operate,
	"GET " + apitype.PathStdio:        principal.Operate,
	"GET " + apitype.PathJobs:         principal.ReadJob,
	"POST " + apitype.PathJobs:        principal.StartJob,
	"GET " + apitype.PathJob:          principal.ReadJob,
	"POST " + apitype.PathJobCancel:   principal.CancelJob,
	"GET " + apitype.PathV1Status:     principal.ReadStatus,
	"GET " + apitype.PathV1Tools:      principal.CallTool,
	"POST " + apitype.PathV1Call:      principal.CallTool,
	"POST " + apitype.PathV1Exec:      principal.CallTool,
	"POST " + apitype.PathV1Cancel:    principal.CancelCall,
	"GET " + apitype.PathV1Jobs:       principal.ReadJob,
	"POST " + apitype.PathV1Jobs:      principal.StartJob,
	"GET " + apitype.PathV1Job:        principal.ReadJob,
	"GET " + apitype.PathV1JobWait:    principal.ReadJob,
	"POST " + apitype.PathV1JobCancel: principal.CancelJob,
	"GET " + apitype.PathV1Audit:      principal.ReadAudit,
	"DELETE " + apitype.PathV1SignIn:  principal.RevokeSignIn,
	"POST " + apitype.PathV1UILink:    principal.Operate,
	"GET " + oauth.StartPath:          principal.SignIn,
	"GET " + oauth.CallbackPath:       principal.SignIn,
}

func TestEveryRouteHasItsPolicy(t *testing.T) {
	h := newTestHandler(t)
	seen := map[string]bool{}
	for _, rt := range h.routes() {
		key := rt.method + " " + rt.path
		seen[key] = true
		want, ok := routePolicies[key]
		switch {
		case !ok:
			t.Errorf("route %s is not in routePolicies: say which operation the policy decides for it", key)
		case rt.op != want:
			t.Errorf("route %s decides %v, routePolicies says %v", key, rt.op, want)
		}
	}
	for key := range routePolicies {
		if !seen[key] {
			t.Errorf("routePolicies lists %s, which is no route", key)
		}
	}
}

// fill makes a path of a route's pattern.
func fill(path string) string {
	r := strings.NewReplacer("{id}", "1", "{name}", "demo")
	return r.Replace(path)
}

// TestOperateRoutesAreTheLocalUsers: every Operate and ReadAudit route
// (the audit log is the operator's), asked by a
// principal other than the local user (the holders of the default and
// of a named token, a host), is a 403 JSON error before its handler
// runs; the local user's request reaches the handler.
func TestOperateRoutesAreTheLocalUsers(t *testing.T) {
	shutdowns := 0
	h := newTestHandlerOpts(t, &Options{Version: "test", Shutdown: func() { shutdowns++ }})
	for _, rt := range h.routes() {
		if rt.op != principal.Operate && rt.op != principal.ReadAudit {
			continue
		}
		for _, who := range []principal.Principal{principal.DefaultToken(), principal.NamedToken("alice", "t"), principal.Host("h"), principal.SocketHost(), {}} {
			req := httptest.NewRequest(rt.method, "http://"+apitype.Host+fill(rt.path), strings.NewReader("{}"))
			req = req.WithContext(principal.NewContext(req.Context(), who))
			rec := httptest.NewRecorder()
			h.mux.ServeHTTP(rec, req)
			var apiErr apitype.Error
			if rec.Code != http.StatusForbidden || json.Unmarshal(rec.Body.Bytes(), &apiErr) != nil || !strings.Contains(apiErr.Error, "forbidden") {
				t.Errorf("%s %s by %v: %d %s, want a 403 JSON error", rt.method, rt.path, who, rec.Code, rec.Body)
			}
		}
	}
	if shutdowns != 0 {
		t.Fatalf("a refused shutdown ran %d times", shutdowns)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "http://"+apitype.Host+apitype.PathShutdown, nil))
	if rec.Code != http.StatusAccepted || shutdowns != 1 {
		t.Errorf("the local user's shutdown: %d, %d shutdowns", rec.Code, shutdowns)
	}
}

// TestV1StatusNarrowed: /v1 behind the HTTP listener's check serves the
// token's holder its part of the status only: no files, hosts or other
// principals; the socket's peer, the local user, reads all of it.
func TestV1StatusNarrowed(t *testing.T) {
	h := newTestHandlerOpts(t, &Options{Version: "test", Socket: "/run/mcpx.sock", ConfigFile: "/home/u/mcpx.json",
		Connected: func() []apitype.ConnectedHost { return []apitype.ConnectedHost{{ID: "host-1", Client: "claude-code"}} }})
	get := func(srv http.Handler) apitype.Status {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+apitype.Host+apitype.PathV1Status, nil))
		var st apitype.Status
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &st) != nil {
			t.Fatalf("GET /v1/status: %d %s", rec.Code, rec.Body)
		}
		return st
	}
	v1 := h.V1(func(*http.Request) (principal.Principal, int, string, string) {
		return principal.NamedToken("alice", "t"), 0, "", ""
	})
	if st := get(v1); st.Socket != "" || st.Config != "" || len(st.Connected) != 0 || st.Version != "test" {
		t.Errorf("a named token's status: %+v, want the version alone", st)
	}
	if st := get(h); st.Socket != "/run/mcpx.sock" || st.Config != "/home/u/mcpx.json" || len(st.Connected) != 1 {
		t.Errorf("the local user's status: %+v, want all of it", st)
	}
}

func newTestHandlerOpts(t *testing.T, opts *Options) *Handler {
	t.Helper()
	cfg := config.Default("/nonexistent/mcpx")
	pool := upstream.NewPool(cfg, nil)
	r := relay.New(cfg, pool, relay.NewRegistry(), nil)
	return New(r, catalog.New(pool, catalog.Naming{}, nil), opts)
}

// TestCancelDecidesForItsContext: the live view's cancel button (Cancel)
// cancels a call for the principal its context carries, the session's:
// another principal's cancels nothing and reads as a call that does not
// exist (no principal's is forbidden); the local user's cancels.
func TestCancelDecidesForItsContext(t *testing.T) {
	h := newTestHandlerOpts(t, &Options{Version: "test"})
	ctx, cancel := context.WithCancelCause(t.Context())
	e, err := h.relay.Registry().AddFor(principal.LocalID, relay.HostKey{Session: "cli-1", ID: "1"}, "tools/call", cancel, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []principal.Principal{principal.DefaultToken(), principal.NamedToken("alice", "t"), principal.SocketHost(), {}} {
		err := h.Cancel(principal.NewContext(t.Context(), who), e.ID, "user")
		var se interface{ StatusCode() int }
		want := http.StatusNotFound
		if who.IsZero() {
			want = http.StatusForbidden
		}
		if !errors.As(err, &se) || se.StatusCode() != want || ctx.Err() != nil {
			t.Errorf("cancel by %v: %v, call cancelled: %v; want a %d and the call running", who, err, ctx.Err() != nil, want)
		}
	}
	if err := h.Cancel(principal.NewContext(t.Context(), principal.LocalUser()), e.ID, "user"); err != nil || ctx.Err() == nil {
		t.Errorf("cancel by the local user: %v, call cancelled: %v", err, ctx.Err() != nil)
	}
}
