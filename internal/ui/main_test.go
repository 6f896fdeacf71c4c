package ui

import (
	"testing"

	"go.uber.org/goleak"
)

// The observers and the view start no goroutine of their own: a stream's
// loop runs on its request's.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
