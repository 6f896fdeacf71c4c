// Package liveview holds mcpx's end-to-end tests of the live view in a real browser.
package liveview

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
