// Package hostile holds mcpx's end-to-end tests of hostile and broken hosts, chaos and load.
package hostile

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
