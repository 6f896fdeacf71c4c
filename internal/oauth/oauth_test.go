package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpx/internal/config"
)

// testServer is an authorization server and a protected MCP endpoint in
// one httptest server (one origin), with knobs for hostile answers.
type testServer struct {
	*httptest.Server
	tokenEndpoint string // overrides the metadata's token_endpoint
	bigMetadata   bool   // pads the metadata past any limit
	badState      bool   // redirects with another state
	issued        atomic.Int64
	code          atomic.Pointer[string] // the last code exchanged
	refreshed     atomic.Int64
	revoked       atomic.Int64
}

func newTestServer(t *testing.T) *testServer {
	ts := &testServer{}
	mux := http.NewServeMux()
	ts.Server = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": ts.URL + "/mcp", "authorization_servers": []string{ts.URL}, "scopes_supported": []string{"read"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{
			"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "revocation_endpoint": ts.URL + "/revoke",
			"code_challenge_methods_supported": []string{"S256"},
		}
		if ts.tokenEndpoint != "" {
			md["token_endpoint"] = ts.tokenEndpoint
		}
		if ts.bigMetadata {
			md["padding"] = strings.Repeat("x", 2*DefaultMaxBody)
		}
		writeJSON(w, md)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "c1", "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") != ts.URL+"/mcp" {
			http.Error(w, "want PKCE S256 and the resource", http.StatusBadRequest)
			return
		}
		state := q.Get("state")
		if ts.badState {
			state = "forged"
		}
		u, _ := url.Parse(q.Get("redirect_uri"))
		u.RawQuery = url.Values{"code": {"code-" + q.Get("code_challenge")}, "state": {state}, "iss": {ts.URL}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("resource") != ts.URL+"/mcp" {
			http.Error(w, "no resource", http.StatusBadRequest)
			return
		}
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			if r.Form.Get("code_verifier") == "" {
				http.Error(w, "no verifier", http.StatusBadRequest)
				return
			}
			code := r.Form.Get("code")
			ts.code.Store(&code)
			ts.issued.Add(1)
		case "refresh_token":
			if r.Form.Get("refresh_token") == "revoked" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"error": "invalid_grant"})
				return
			}
			ts.refreshed.Add(1)
		}
		writeJSON(w, map[string]any{"access_token": "at-" + r.Form.Get("grant_type"), "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt"})
	})
	mux.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) { ts.revoked.Add(1) })
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer at-") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp", scope="read"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
	})
	return ts
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// follow is a user agent that approves at once; it keeps cookies, as a
// browser does.
func follow(ctx context.Context, u string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestLoginRefreshRevoke(t *testing.T) {
	ts := newTestServer(t)
	c := &Client{}
	rec, err := c.Login(testCtx(t), LoginRequest{Server: "s", URL: ts.URL + "/mcp", Browser: follow})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Token.AccessToken != "at-authorization_code" || rec.Resource != ts.URL+"/mcp" || rec.Client.How != "dynamic" {
		t.Fatalf("record %+v", rec)
	}
	if strings.Contains(rec.Token.String(), "at-") {
		t.Fatal("Token.String shows the token")
	}
	store := &Store{Dir: t.TempDir()}
	rec.Token.Obtained = time.Now().Add(-time.Hour)     // an hour's token
	rec.Token.Expiry = time.Now().Add(10 * time.Second) // within refreshAhead
	if err := store.Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Server: "s", URL: ts.URL + "/mcp", Store: store, Client: c, Base: http.DefaultTransport}
	hc := &http.Client{Transport: tr}
	resp, err := hc.Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "Bearer at-refresh_token" || ts.refreshed.Load() != 1 {
		t.Fatalf("got %q after %d refreshes, want the refreshed token", body, ts.refreshed.Load())
	}
	saved, _ := store.Load(t.Context(), "s")
	if saved.Token.AccessToken != "at-refresh_token" {
		t.Fatal("the refreshed token was not stored")
	}
	// A token for the server never goes to another origin.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	resp, err = hc.Get(other.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) != 0 {
		t.Fatalf("another origin got Authorization %q", body)
	}
	if ok, err := c.Revoke(testCtx(t), saved); err != nil || !ok || ts.revoked.Load() != 2 {
		t.Fatalf("revoke: %v %v, %d revocations", ok, err, ts.revoked.Load())
	}
}

func TestSignInErrorWithoutBrowser(t *testing.T) {
	ts := newTestServer(t)
	tr := &Transport{Server: "s", URL: ts.URL + "/mcp", Store: &Store{Dir: t.TempDir()}, Client: &Client{}, Base: http.DefaultTransport}
	_, err := (&http.Client{Transport: tr}).Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	var se *SignInError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "run `mcpx login s`") {
		t.Fatalf("got %v, want a SignInError saying to run mcpx login", err)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(ts *testServer, req *LoginRequest)
		want  func(error) bool
	}{
		{"token endpoint at another origin", func(ts *testServer, _ *LoginRequest) {
			ts.tokenEndpoint = "http://127.0.0.2:9/token"
		}, func(err error) bool { var oe *OriginError; return errors.As(err, &oe) }},
		{"redirect URI not loopback", func(_ *testServer, req *LoginRequest) {
			req.Settings.RedirectURI = "http://example.com:8080/callback"
		}, func(err error) bool { return strings.Contains(err.Error(), "not an http URL on a loopback address") }},
		{"state mismatch", func(ts *testServer, _ *LoginRequest) { ts.badState = true },
			func(err error) bool { return errors.Is(err, ErrStateMismatch) }},
		{"oversized metadata", func(ts *testServer, _ *LoginRequest) { ts.bigMetadata = true },
			func(err error) bool { var te *TooLargeError; return errors.As(err, &te) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t)
			req := LoginRequest{Server: "s", URL: ts.URL + "/mcp", Browser: follow}
			tc.setup(ts, &req)
			_, err := (&Client{}).Login(testCtx(t), req)
			if err == nil || !tc.want(err) {
				t.Fatalf("got %v", err)
			}
			if ts.issued.Load() != 0 {
				t.Fatal("a token was issued anyway")
			}
			t.Log(err)
		})
	}
}

func TestRefreshRefusedNeedsSignIn(t *testing.T) {
	ts := newTestServer(t)
	store := &Store{Dir: t.TempDir()}
	rec := &Record{Server: "s", ServerURL: ts.URL + "/mcp", Resource: ts.URL + "/mcp",
		Metadata: ServerMetadata{TokenEndpoint: ts.URL + "/token"}, Client: Registration{ClientID: "c1", AuthMethod: "none"},
		Token: Token{AccessToken: "stale", RefreshToken: "revoked", Expiry: time.Now().Add(-time.Minute)}}
	if err := store.Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Server: "s", URL: ts.URL + "/mcp", Store: store, Client: &Client{}, Base: http.DefaultTransport}
	_, err := (&http.Client{Transport: tr}).Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	var se *SignInError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SignInError", err)
	}
}

func TestParseChallenge(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://s/.well-known/oauth-protected-resource"`)
	ch, ok := ParseChallenge(h)
	if !ok || ch.Error != "insufficient_scope" || strings.Join(ch.Scopes, ",") != "a,b" || ch.ResourceMetadata != "https://s/.well-known/oauth-protected-resource" {
		t.Fatalf("got %+v %v", ch, ok)
	}
}

func TestSignInsForHosts(t *testing.T) {
	ts := newTestServer(t)
	s := &SignIns{Store: &Store{Dir: t.TempDir()}}
	srv := &config.Server{Name: "s", URL: ts.URL + "/mcp"}
	u1, err := s.Begin(srv)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := s.Begin(srv)
	if err != nil || u2 != u1 {
		t.Fatalf("a second host got %q, %v; want the running sign-in's URL", u2, err)
	}
	if err := follow(testCtx(t), u1); err != nil {
		t.Fatal(err)
	}
	// The browser's page answered once the sign-in was stored.
	if rec, err := s.Store.Load(t.Context(), "s"); err != nil || rec.Token.AccessToken != "at-authorization_code" {
		t.Fatalf("the stored sign-in: %v", err)
	}
	// One left unfinished ends with Close.
	if _, err := s.Begin(&config.Server{Name: "t", URL: ts.URL + "/mcp"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Begin(srv); !errors.Is(err, ErrSignInsClosed) {
		t.Fatalf("Begin after Close: %v", err)
	}
}

// A step-up the transport cannot do itself is noted: the next sign-in
// requests the scopes the server asked for with the earlier ones.
func TestStepUpNotedForTheNextSignIn(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="write"`)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer ts.Close()
	store := &Store{Dir: t.TempDir()}
	if err := store.Save(t.Context(), &Record{Server: "s", ServerURL: ts.URL, Scopes: []string{"read"}, Token: Token{AccessToken: "a"}}); err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Server: "s", URL: ts.URL, Store: store, Client: &Client{}, Base: http.DefaultTransport}
	_, err := (&http.Client{Transport: tr}).Get(ts.URL)
	var se *SignInError
	if !errors.As(err, &se) || strings.Join(se.Scopes, " ") != "write" {
		t.Fatalf("got %v, want a SignInError asking for write", err)
	}
	rec, err := store.Load(t.Context(), "s")
	if err != nil || strings.Join(rec.Scopes, " ") != "read write" {
		t.Fatalf("the stored scopes: %v %v, want read write", rec.Scopes, err)
	}
	if got := chooseScopes(nil, &Challenge{}, nil, rec); strings.Join(got, " ") != "read write" {
		t.Fatalf("the next sign-in requests %v", got)
	}
}

func TestLoginToAServerThatNeedsNone(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{}}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer ts.Close()
	_, err := (&Client{}).Login(testCtx(t), LoginRequest{Server: "s", URL: ts.URL + "/mcp", Browser: follow})
	if !errors.Is(err, ErrNoSignIn) {
		t.Fatalf("got %v, want ErrNoSignIn", err)
	}
}
