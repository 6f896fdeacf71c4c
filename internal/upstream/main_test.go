package upstream

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the pool starts ends with it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
