// Package relay holds mcpx's end-to-end tests of the call path over stdio: calls, cancellation, timeouts, progress, limits, the revision bridges, and the TypeScript SDK and go-sdk hosts on it.
package relay

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
