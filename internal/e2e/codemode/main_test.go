// Package codemode holds mcpx's end-to-end tests of code mode: scripts in the sandbox calling tools, their bounds, jobs and hosts.
package codemode

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
