package oauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The cost of a server's round tripper on each request: without a
// sign-in (a stat of the absent file), and with one (the file's mtime
// checked, the token set), and with one sealed in a shared store (read
// and opened once per DefaultMaxAge, from the cache otherwise; the store
// in memory here).
func BenchmarkTransport(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 4}
	defer base.CloseIdleConnections()
	run := func(b *testing.B, rt http.RoundTripper) {
		c := &http.Client{Transport: rt}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Get(ts.URL)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("base", func(b *testing.B) { run(b, base) })
	b.Run("not-signed-in", func(b *testing.B) {
		run(b, &Transport{Server: "s", URL: ts.URL, Store: &Store{Dir: b.TempDir()}, Client: &Client{}, Base: base})
	})
	b.Run("signed-in", func(b *testing.B) {
		store := &Store{Dir: b.TempDir()}
		if err := store.Save(b.Context(), &Record{Server: "s", ServerURL: ts.URL, Token: Token{AccessToken: "a", Expiry: time.Now().Add(time.Hour)}}); err != nil {
			b.Fatal(err)
		}
		run(b, &Transport{Server: "s", URL: ts.URL, Store: store, Client: &Client{}, Base: base})
	})
	b.Run("signed-in-sealed", func(b *testing.B) {
		keys, err := NewKeys(testKey(1))
		if err != nil {
			b.Fatal(err)
		}
		store := &Sealed{Blobs: &memBlobs{}, Keys: keys}
		if err := store.Save(b.Context(), &Record{Server: "s", ServerURL: ts.URL, Token: Token{AccessToken: "a", Expiry: time.Now().Add(time.Hour)}}); err != nil {
			b.Fatal(err)
		}
		run(b, &Transport{Server: "s", URL: ts.URL, Store: store, Client: &Client{}, Base: base})
	})
}
