package tracing

import (
	"testing"

	"go.uber.org/goleak"
)

// Shutdown ends the span processor's goroutine: nothing is left behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
