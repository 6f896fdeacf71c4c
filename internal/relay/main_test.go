package relay

import (
	"testing"

	"go.uber.org/goleak"
)

// The limiter starts no goroutine; a call that leaves its queue leaves
// nothing behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
