package ui

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/principal"
)

// routeDecisions is every route of the live view with the operation its
// session's principal's policy decides (none: public, no data). A route
// added to routes() without a line here, or with another operation,
// fails TestEveryRouteHasItsDecision; a non-public one without an
// operation at all makes NewView panic.
//
// ReadStatus and Operate are decided before the route's handler runs;
// CancelCall and CancelJob by the daemon's operation, which knows whose
// call or job the request names, for the principal the request's
// context carries. POST /ui/session decides Operate for the principal
// its link was minted for before it gives a session.
var routeDecisions = map[string]principal.Op{
	"GET /ui/":                        0, // the page, its script and style
	"POST /ui/session":                principal.Operate,
	"GET /ui/state":                   principal.ReadStatus,
	"GET /ui/events":                  principal.ReadStatus,
	"POST /ui/calls/{id}/cancel":      principal.CancelCall,
	"POST /ui/servers/{name}/restart": principal.Operate,
	"POST /ui/jobs/{id}/cancel":       principal.CancelJob,
}

func TestEveryRouteHasItsDecision(t *testing.T) {
	v := NewView(ViewOptions{Live: NewLive(func() apitype.Status { return apitype.Status{} })})
	seen := map[string]bool{}
	for _, rt := range v.routes() {
		seen[rt.pattern] = true
		want, ok := routeDecisions[rt.pattern]
		switch {
		case !ok:
			t.Errorf("route %s has no line in routeDecisions: say what the policy decides for it", rt.pattern)
		case rt.op != want:
			t.Errorf("route %s decides %v, routeDecisions says %v", rt.pattern, rt.op, want)
		case rt.op == 0 && !rt.public:
			t.Errorf("route %s decides nothing and is not public", rt.pattern)
		}
	}
	for p := range routeDecisions {
		if !seen[p] {
			t.Errorf("routeDecisions lists %s, which the view does not serve", p)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a route without a decision was served")
			}
		}()
		v.decided(route{pattern: "GET /ui/new", h: http.NotFoundHandler()})
	}()
}

// TestViewServesItsRoutesOnly: the view's mux is given routes in one
// place, NewView's loop over routes(), so that no route bypasses the
// table above.
func TestViewServesItsRoutesOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var at []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Handle" || sel.Sel.Name == "HandleFunc") {
					at = append(at, fn.Name.Name+" at "+fset.Position(call.Pos()).String())
				}
				return true
			})
		}
	}
	if len(at) != 1 || !strings.HasPrefix(at[0], "NewView ") {
		t.Errorf("the view registers handlers at %q, want once, in NewView's loop over routes()", at)
	}
}

// TestLiveViewRoutesDecided: every route but the public ones is refused
// to a session of any principal but the local user's (the holders of the
// default and of a named token, a host over HTTP on the socket) before
// anything is read or done, or, for a call or job, its operation is
// asked for the session's principal and refuses; the local user's
// session is served. A link minted for another principal gives no
// session.
func TestLiveViewRoutesDecided(t *testing.T) {
	live := NewLive(func() apitype.Status { return apitype.Status{} })
	defer live.Close()
	ran := map[string]int{}
	// The operations of the daemon decide with the policy the request's
	// context names, as localapi's Cancel and CancelJob do, for a call
	// and a job of the local user's.
	decide := func(ctx context.Context, op principal.Op) error {
		return principal.NewPolicy(principal.From(ctx), nil, "").Decide(op, principal.Target{ID: "1", Owner: principal.LocalID})
	}
	v := NewView(ViewOptions{
		Live:    live,
		Restart: func(context.Context, string) error { ran["restart"]++; return nil },
		Cancel: func(ctx context.Context, id uint64, reason string) error {
			if err := decide(ctx, principal.CancelCall); err != nil {
				return statusError{http.StatusNotFound, err}
			}
			ran["cancel"]++
			return nil
		},
		CancelJob: func(ctx context.Context, id string) error {
			if err := decide(ctx, principal.CancelJob); err != nil {
				return statusError{http.StatusNotFound, err}
			}
			ran["cancelJob"]++
			return nil
		},
	})
	srv := httptest.NewServer(v)
	defer srv.Close()
	c := srv.Client()
	do := func(method, path, session string) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Origin", srv.URL)
		req.Header.Set(SessionHeader, session)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	others := []principal.Principal{principal.DefaultToken(), principal.NamedToken("alice", "t"), principal.SocketHost(), {}}
	for _, who := range others {
		_, tok, _ := strings.Cut(v.LinkPath(who), "#t=")
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/session", nil)
		req.Header.Set("Origin", srv.URL)
		req.Header.Set(LinkHeader, tok)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || len(v.keys.sessions) != 0 {
			t.Errorf("a link minted for %v: %d, %d sessions; want 403 and none", who, resp.StatusCode, len(v.keys.sessions))
		}
	}
	paths := strings.NewReplacer("{id}", "1", "{name}", "demo")
	for _, rt := range v.routes() {
		if rt.public {
			continue
		}
		method, path, _ := strings.Cut(rt.pattern, " ")
		path = paths.Replace(path)
		if method == http.MethodGet && path == "/ui/events" {
			continue // a stream: its decision is the state's, checked below by refusal only
		}
		for _, who := range others {
			if code := do(method, path, v.keys.open(who)); code != http.StatusForbidden && code != http.StatusNotFound {
				t.Errorf("%s by a session of %v: %d, want 403 or 404", rt.pattern, who, code)
			}
		}
		if len(ran) != 0 {
			t.Fatalf("after %s refused to other principals, operations ran: %v", rt.pattern, ran)
		}
		if code := do(method, path, v.keys.open(principal.LocalUser())); code/100 != 2 {
			t.Errorf("%s by the local user's session: %d, want it served", rt.pattern, code)
		}
		clear(ran)
	}
	for _, who := range others {
		if code := do(http.MethodGet, "/ui/events", v.keys.open(who)); code != http.StatusForbidden {
			t.Errorf("the event stream for a session of %v: %d, want 403", who, code)
		}
	}
}

type statusError struct {
	code int
	err  error
}

func (e statusError) Error() string   { return e.err.Error() }
func (e statusError) StatusCode() int { return e.code }
