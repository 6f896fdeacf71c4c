// Package conformance holds mcpx's end-to-end tests of the MCP conformance suite against mcpx as server and as client.
package conformance

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
