package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// counted is a server that counts the requests it gets: where mcpx must
// fetch nothing.
func counted(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		writeJSON(w, map[string]any{"resource": "whatever", "authorization_servers": []string{"http://127.0.0.1:9"}})
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// A challenge's resource_metadata on another origin (another port of the
// loopback address) is refused unfetched, and not quoted.
func TestResourceMetadataElsewhereRefused(t *testing.T) {
	ts := newTestServer(t)
	other, hits := counted(t)
	for _, rm := range []string{other.URL + "/internal-admin", "http://localhost:" + strings.TrimPrefix(ts.URL, "http://127.0.0.1:") + "/x", "file:///etc/passwd"} {
		_, err := (&Client{}).DiscoverResource(testCtx(t), ts.URL+"/mcp", &Challenge{ResourceMetadata: rm})
		if err == nil {
			t.Fatalf("resource_metadata %s was taken", rm)
		}
		if strings.Contains(err.Error(), rm) || strings.Contains(err.Error(), "internal-admin") {
			t.Errorf("the error quotes what the server sent: %v", err)
		}
		t.Logf("refused: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin was asked %d times", n)
	}
	// On the server's own origin it is fetched.
	if _, err := (&Client{}).DiscoverResource(testCtx(t), ts.URL+"/mcp", &Challenge{ResourceMetadata: ts.URL + "/.well-known/oauth-protected-resource/mcp"}); err != nil {
		t.Errorf("resource_metadata on the server's origin: %v", err)
	}
}

// A metadata URL that redirects to another origin is not followed; one
// that redirects within its origin is, without a Referer.
func TestMetadataRedirects(t *testing.T) {
	other, hits := counted(t)
	var referer atomic.Pointer[string]
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/oauth-protected-resource/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/prm", http.StatusFound)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/near", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		ref := r.Header.Get("Referer")
		referer.Store(&ref)
		writeJSON(w, map[string]any{"resource": srv.URL + "/near", "authorization_servers": []string{srv.URL}})
	})
	_, err := (&Client{}).DiscoverResource(testCtx(t), srv.URL+"/away", nil)
	if err == nil || strings.Contains(err.Error(), other.URL) {
		t.Errorf("a redirect to another origin: %v, want a refusal that does not quote it", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect to another origin was followed (%d requests)", n)
	}
	t.Logf("refused: %v", err)
	if _, err := (&Client{}).DiscoverResource(testCtx(t), srv.URL+"/near", nil); err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	if ref := referer.Load(); ref == nil || *ref != "" {
		t.Errorf("the redirect within the origin reached its target with Referer %q, want none", deref(ref))
	}
}

// What a server sends is never quoted in mcpx's errors: its resource,
// issuer, endpoints, Content-Type or JSON.
func TestFetchedNotQuoted(t *testing.T) {
	const mark = "\x1b]52;c;bWFyaw==\x07MARK"
	for _, tc := range []struct {
		name     string
		prm, asm func(w http.ResponseWriter, base string)
	}{
		{"resource", func(w http.ResponseWriter, base string) {
			writeJSON(w, map[string]any{"resource": mark, "authorization_servers": []string{base}})
		}, nil},
		{"authorization server", func(w http.ResponseWriter, base string) {
			writeJSON(w, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{"ftp://" + mark}})
		}, nil},
		{"content type", func(w http.ResponseWriter, base string) {
			w.Header().Set("Content-Type", "text/"+mark)
			w.Write([]byte("{}"))
		}, nil},
		{"json", func(w http.ResponseWriter, base string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource": ` + mark + `}`))
		}, nil},
		{"json type", func(w http.ResponseWriter, base string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource": 12345678, "authorization_servers": ["MARK"]}`))
		}, nil},
		{"issuer", nil, func(w http.ResponseWriter, base string) {
			writeJSON(w, map[string]any{"issuer": mark, "authorization_endpoint": base + "/a", "token_endpoint": base + "/t", "code_challenge_methods_supported": []string{"S256"}})
		}},
		{"endpoint", nil, func(w http.ResponseWriter, base string) {
			writeJSON(w, map[string]any{"issuer": base, "authorization_endpoint": "https://" + "MARK.example/a", "token_endpoint": base + "/t", "code_challenge_methods_supported": []string{"S256"}})
		}},
		{"insecure endpoint", nil, func(w http.ResponseWriter, base string) {
			writeJSON(w, map[string]any{"issuer": base, "authorization_endpoint": "http://MARK.example/a", "token_endpoint": base + "/t", "code_challenge_methods_supported": []string{"S256"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
				if tc.prm != nil {
					tc.prm(w, srv.URL)
					return
				}
				writeJSON(w, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
			})
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) { tc.asm(w, srv.URL) })
			c := &Client{}
			_, md, _, err := c.discover(testCtx(t), srv.URL+"/mcp", &Challenge{}, true)
			if err == nil {
				t.Fatalf("taken: %+v", md)
			}
			if strings.Contains(err.Error(), "MARK") || strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("the error quotes what the server sent: %q", err)
			}
			t.Logf("refused: %v", err)
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return "(not reached)"
	}
	return *p
}
