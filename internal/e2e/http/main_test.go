// Package http holds mcpx's end-to-end tests of the Streamable HTTP transport, toward hosts (mcpx serve --http) and toward upstreams.
package http

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
