package sandbox

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The test binary doubles as the script's child process.
	if len(os.Args) > 1 && os.Args[1] == ChildVerb {
		os.Exit(RunChild(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}
