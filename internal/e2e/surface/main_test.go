// Package surface holds mcpx's end-to-end tests of what hosts see of the upstreams: tools, resources and prompts, list changes, subscriptions, questions (elicitation, sampling, roots, URL elicitation) and the transcript goldens.
package surface

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
