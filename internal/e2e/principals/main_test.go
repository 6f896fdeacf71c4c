// Package principals holds mcpx's end-to-end tests of principals: host tokens, host policies and the principal matrix.
package principals

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
