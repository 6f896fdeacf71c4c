package conformance

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"mcpx/internal/conformfixture"
)

// serveConformanceFixture serves a conformance fixture over Streamable
// HTTP on a loopback port until the test ends, and returns its URL.
func serveConformanceFixture(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", conformfixture.New(nil).Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("the conformance fixture's server: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}
