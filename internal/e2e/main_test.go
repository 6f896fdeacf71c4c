// Package e2e holds mcpx's integration tests: a real host (raw JSON-RPC,
// go-sdk, the TypeScript SDK) against mcpx against real upstream
// processes, each test in every run mode.
package e2e

import (
	"os"
	"testing"

	"mcpx/internal/mcpxtest"
)

func TestMain(m *testing.M) {
	// The test binary doubles as small misbehaving upstreams (fixture_test.go).
	if name := os.Getenv(fixtureEnv); name == conformanceFixtureName {
		os.Exit(runConformanceFixture())
	} else if name != "" {
		os.Exit(runFixture(name))
	}
	mcpxtest.Main(m)
}
