package oauth

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a sign-in starts (the loopback listener, the browser)
// ends with it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
