// Package bench holds mcpx's end-to-end tests of benchmarks of the call path.
package bench

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
