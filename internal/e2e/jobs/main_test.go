// Package jobs holds mcpx's end-to-end tests of durable jobs and MCP tasks: calls that become jobs, their questions, restarts, /v1 and the CLI.
package jobs

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
