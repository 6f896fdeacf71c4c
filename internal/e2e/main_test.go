// Package e2e holds mcpx's integration tests: a real host (raw JSON-RPC,
// go-sdk, the TypeScript SDK) against mcpx against real upstream
// processes, each test in every run mode.
package e2e

import (
	"testing"

	"mcpx/internal/mcpxtest"
)

func TestMain(m *testing.M) { mcpxtest.Main(m) }
