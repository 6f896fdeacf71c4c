package harness

import (
	"context"
	"fmt"
	"os"

	"mcpx/internal/conformfixture"
)

// ConformanceFixtureName is the MCPX_E2E_FIXTURE value that makes the test
// binary the conformance fixture on stdio.
const ConformanceFixtureName = "conformance"

// RunConformanceFixture serves the conformance fixture on stdio until
// stdin ends (mcpx stopped it: the normal end of a stdio server); why it
// ended goes to stderr, which mcpx logs.
func RunConformanceFixture() int {
	err := conformfixture.New(nil).ServeStdio(context.Background(), os.Stdin, os.Stdout)
	fmt.Fprintf(os.Stderr, "conformance fixture: ended (%v)\n", err)
	return 0
}
