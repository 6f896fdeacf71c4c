package cli_test

import (
	"testing"

	"mcpx/internal/mcpxtest"
)

// TestMain removes the mcpx binary that the live tests build.
func TestMain(m *testing.M) { mcpxtest.Main(m) }
