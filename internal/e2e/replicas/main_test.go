// Package replicas holds mcpx's end-to-end tests of replicas sharing one PostgreSQL store behind a load balancer: sessions, tasks, tokens, partitions, restarts.
package replicas

import (
	"testing"

	"mcpx/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
