package upstream

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the pool starts ends with it. Built with the race
// detector, the test binary must not sleep at exit.
func TestMain(m *testing.M) {
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	goleak.VerifyTestMain(m)
}
