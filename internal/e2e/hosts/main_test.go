// Package hosts holds mcpx's end-to-end tests of real MCP hosts (Claude Code, Codex, Gemini CLI, opencode) installed and driven against mcpx.
package hosts

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
