package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
)

// memBlobs is a Blobs in memory: the narrow seam the shared store fills
// (the store's own tests run its PostgreSQL side).
type memBlobs struct {
	mu    sync.Mutex // the store's lock: UpdateBlob holds it through fn
	blobs map[string][]byte
	reads int
}

func (m *memBlobs) Blob(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return m.blobs[name], nil
}

func (m *memBlobs) PutBlob(_ context.Context, name string, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.blobs == nil {
		m.blobs = map[string][]byte{}
	}
	m.blobs[name] = v
	return nil
}

func (m *memBlobs) DeleteBlob(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, name)
	return nil
}

func (m *memBlobs) UpdateBlob(_ context.Context, name string, fn func([]byte) ([]byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := fn(m.blobs[name])
	if err != nil || next == nil {
		return err
	}
	if m.blobs == nil {
		m.blobs = map[string][]byte{}
	}
	m.blobs[name] = next
	return nil
}

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeyBytes) }

func mustKeys(t *testing.T, cur []byte, prev ...[]byte) *Keys {
	t.Helper()
	ks, err := NewKeys(cur, prev...)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// A sealed record holds no token in the clear, reads back with the key,
// and does not open under another key or another server's name.
func TestSealedRecords(t *testing.T) {
	ctx := t.Context()
	blobs := &memBlobs{}
	s := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(1))}
	rec := &Record{Server: "s", ServerURL: "https://s/mcp", Token: Token{AccessToken: "secret-access", RefreshToken: "secret-refresh"}}
	if err := s.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	raw := blobs.blobs[blobName("s")]
	if bytes.Contains(raw, []byte("secret")) || bytes.Contains(raw, []byte("https://s")) {
		t.Fatal("the sealed blob shows the record")
	}
	other := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(1))}
	if got, err := other.Load(ctx, "s"); err != nil || got.Token.AccessToken != "secret-access" {
		t.Fatalf("another process with the key: %v, %v", got, err)
	}
	wrong := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(2))}
	_, err := wrong.Load(ctx, "s")
	var ke *KeyError
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "sealed with key "+mustKeys(t, testKey(1)).ID()) ||
		!strings.Contains(err.Error(), "previousKeyFiles") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("the wrong key: %v", err)
	}
	blobs.blobs[blobName("t")] = raw // moved to another server's name
	if _, err := other.Load(ctx, "t"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "moved from another server") {
		t.Fatalf("a blob under another name: %v", err)
	}
	tampered := bytes.Clone(raw)
	tampered[len(tampered)-1] ^= 1
	blobs.blobs[blobName("u")] = tampered
	if _, err := other.Load(ctx, "u"); !errors.As(err, &ke) {
		t.Fatalf("an altered blob: %v", err)
	}
	blobs.blobs[blobName("v")] = []byte("{}")
	if _, err := other.Load(ctx, "v"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "not a sealed sign-in") {
		t.Fatalf("a blob not sealed: %v", err)
	}
	if err := other.Delete(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "s"); err != nil {
		t.Fatalf("within MaxAge the old process may still answer from its cache: %v", err)
	}
	if _, err := other.Load(ctx, "s"); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("deleted, on the process that deleted it: %v", err)
	}
}

// Load reads the store at most once per MaxAge; Update always reads it.
func TestSealedCache(t *testing.T) {
	ctx := t.Context()
	now := time.Unix(1000, 0)
	blobs := &memBlobs{}
	a := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(1)), Now: func() time.Time { return now }}
	b := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(1)), Now: func() time.Time { return now }}
	if err := a.Save(ctx, &Record{Server: "s", Token: Token{AccessToken: "one"}}); err != nil {
		t.Fatal(err)
	}
	if r, _ := b.Load(ctx, "s"); r.Token.AccessToken != "one" {
		t.Fatal(r)
	}
	if err := a.Save(ctx, &Record{Server: "s", Token: Token{AccessToken: "two"}}); err != nil {
		t.Fatal(err)
	}
	reads := blobs.reads
	if r, _ := b.Load(ctx, "s"); r.Token.AccessToken != "one" || blobs.reads != reads {
		t.Fatalf("within MaxAge: %q after %d reads", r.Token.AccessToken, blobs.reads-reads)
	}
	now = now.Add(DefaultMaxAge)
	if r, _ := b.Load(ctx, "s"); r.Token.AccessToken != "two" {
		t.Fatalf("after MaxAge: %q", r.Token.AccessToken)
	}
	got, err := a.Update(ctx, "s", func(cur *Record) (*Record, error) {
		next := *cur
		next.Token.AccessToken = "three"
		return &next, nil
	})
	if err != nil || got.Token.AccessToken != "three" {
		t.Fatal(got, err)
	}
	if r, _ := b.Update(ctx, "s", func(*Record) (*Record, error) { return nil, nil }); r.Token.AccessToken != "three" {
		t.Fatalf("Update reads afresh: %q", r.Token.AccessToken)
	}
}

// Key rotation: with the old key listed as previous, a sign-in sealed
// with it still opens, and the next write seals it with the new key, after
// which the old key can go.
func TestSealedKeyRotation(t *testing.T) {
	ctx := t.Context()
	blobs := &memBlobs{}
	old := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(1))}
	if err := old.Save(ctx, &Record{Server: "s", Token: Token{AccessToken: "a"}}); err != nil {
		t.Fatal(err)
	}
	rotating := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(2), testKey(1))}
	if r, err := rotating.Load(ctx, "s"); err != nil || r.Token.AccessToken != "a" {
		t.Fatalf("opened with the previous key: %v, %v", r, err)
	}
	if _, err := rotating.Update(ctx, "s", func(*Record) (*Record, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	newOnly := &Sealed{Blobs: blobs, Keys: mustKeys(t, testKey(2))}
	if r, err := newOnly.Load(ctx, "s"); err != nil || r.Token.AccessToken != "a" {
		t.Fatalf("after the rewrite, the new key alone: %v, %v", r, err)
	}
}

// The key comes from a file or an environment variable the config names;
// each way it can be missing or wrong has its message, which never shows
// the value.
func TestLoadKeys(t *testing.T) {
	dir := t.TempDir()
	good := base64.StdEncoding.EncodeToString(testKey(7))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file, short, prev := write("k", good+"\n"), write("short", "c2hvcnQ="), write("prev", base64.StdEncoding.EncodeToString(testKey(8)))
	env := func(k string) string { return map[string]string{"K": good, "BAD": "not base64!"}[k] }
	for _, k := range []config.SignInKey{{File: file, PreviousFiles: []string{prev}}, {Env: "K"}} {
		ks, err := LoadKeys(k, env)
		if err != nil || ks.ID() != mustKeys(t, testKey(7)).ID() {
			t.Fatalf("%+v: %v", k, err)
		}
	}
	for _, tc := range []struct {
		k    config.SignInKey
		want string
	}{
		{config.SignInKey{}, "name it with mcpx.oauth.keyFile or mcpx.oauth.keyEnv"},
		{config.SignInKey{File: filepath.Join(dir, "absent")}, "reading the sign-in key (mcpx.oauth.keyFile " + dir},
		{config.SignInKey{File: short}, "is not a key: a key is 32 random bytes, base64-encoded"},
		{config.SignInKey{Env: "UNSET"}, "(mcpx.oauth.keyEnv $UNSET) is not set"},
		{config.SignInKey{Env: "BAD"}, "(mcpx.oauth.keyEnv $BAD) is not a key"},
		{config.SignInKey{Env: "K", PreviousFiles: []string{short}}, "mcpx.oauth.previousKeyFiles " + short + ") is not a key"},
	} {
		_, err := LoadKeys(tc.k, env)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "c2hvcnQ") || strings.Contains(err.Error(), "not base64!") {
			t.Errorf("%+v: %v, want %q", tc.k, err, tc.want)
		}
	}
}

// Gateways sharing sealed records whose token the server refuses refresh
// it once between them: 2 gateways × 4 requests at once, one refresh at
// the authorization server, every request sent again with its token.
func TestTransportRefreshOnceAcrossGateways(t *testing.T) {
	ts := newTestServer(t)
	blobs := &memBlobs{}
	keys := mustKeys(t, testKey(3))
	rec := &Record{Server: "s", ServerURL: ts.URL + "/mcp", Resource: ts.URL + "/mcp", Metadata: ServerMetadata{TokenEndpoint: ts.URL + "/token"},
		Client: Registration{ClientID: "c1"}, Token: Token{AccessToken: "refused-by-the-server", RefreshToken: "rt", Expiry: time.Now().Add(time.Hour)}}
	if err := (&Sealed{Blobs: blobs, Keys: keys}).Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	bodies := make(chan string, 8)
	for range 2 {
		tr := &Transport{Server: "s", URL: ts.URL + "/mcp", Store: &Sealed{Blobs: blobs, Keys: keys}, Client: &Client{}, Base: http.DefaultTransport}
		for range 4 {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, ts.URL+"/mcp", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					bodies <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				bodies <- string(b)
			})
		}
	}
	wg.Wait()
	close(bodies)
	for b := range bodies {
		if b != "Bearer at-refresh_token" {
			t.Errorf("a request: %q", b)
		}
	}
	if n := ts.refreshed.Load(); n != 1 {
		t.Fatalf("%d refreshes at the authorization server, want 1", n)
	}
}

func (m *memBlobs) BlobNames(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, v := range m.blobs {
		if strings.HasPrefix(k, prefix) && v != nil {
			out = append(out, k)
		}
	}
	return out, nil
}
