package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"mcpx/internal/conformfixture"
)

// conformanceFixtureName is the MCPX_E2E_FIXTURE value that makes the test
// binary the conformance fixture on stdio.
const conformanceFixtureName = "conformance"

// runConformanceFixture serves the conformance fixture on stdio until
// stdin ends (mcpx stopped it: the normal end of a stdio server); why it
// ended goes to stderr, which mcpx logs.
func runConformanceFixture() int {
	err := conformfixture.New(nil).ServeStdio(context.Background(), os.Stdin, os.Stdout)
	fmt.Fprintf(os.Stderr, "conformance fixture: ended (%v)\n", err)
	return 0
}

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
