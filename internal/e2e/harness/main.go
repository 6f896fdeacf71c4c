// Package harness is what mcpx's end-to-end tests share: starting mcpx
// (in-process, as a daemon, over HTTP, as replicas), the hosts that drive
// it (raw JSON-RPC, go-sdk, the TypeScript SDK, real host CLIs), the
// misbehaving upstreams the test binary plays, and the waits and checks
// the areas' tests have in common.
//
// The tests themselves live in one package per area under internal/e2e
// (relay, surface, http, jobs, codemode, replicas, oauth, hosts, daemon,
// liveview, principals, hostile, conformance, bench), so that a change
// runs its own area's tests and go test runs the areas side by side.
// Each area's TestMain is Main: every test binary can play the harness's
// upstreams and hosts when it is re-executed as one.
package harness

import (
	"os"
	"testing"

	"mcpx/internal/mcpxtest"
)

// Main is every area's TestMain.
func Main(m *testing.M) {
	// The test binary doubles as small misbehaving upstreams (fixture.go).
	if name := os.Getenv(FixtureEnv); name == ConformanceFixtureName {
		os.Exit(RunConformanceFixture())
	} else if name != "" {
		os.Exit(RunFixture(name))
	}
	mcpxtest.Main(m)
}
