package bridge

import (
	"testing"

	"go.uber.org/goleak"
)

// A held call's expiry is a timer, and a call's life is the relay's: a
// test leaves nothing running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
