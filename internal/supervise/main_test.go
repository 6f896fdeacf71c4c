package supervise

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The test binary doubles as the supervisor (shim.go), as the mcpx
// executable does; built with the race detector, it must not sleep at
// exit.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ShimVerb {
		os.Exit(RunShim(os.Args[2:]))
	}
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	goleak.VerifyTestMain(m)
}
