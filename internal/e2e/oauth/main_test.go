// Package oauth holds mcpx's end-to-end tests of upstreams behind OAuth: sign-in, refusal, a sign-in asked by URL, status.
package oauth

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
