// Package daemon holds mcpx's end-to-end tests of the daemon and its CLI: start, stop, restart, reload, doctor, /v1, metrics, traces, orphans.
package daemon

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
