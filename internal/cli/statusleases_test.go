package cli

import (
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
)

// mcpx status says when the daemon lost its job leases, why, and how far
// its clock is off the store's; nothing when all is well.
func TestPrintJobLeases(t *testing.T) {
	now := time.Now()
	var b strings.Builder
	printJobLeases(&b, &apitype.JobLeases{Lost: true, Renewed: now.Add(-40 * time.Second), Error: "renewing job leases: context deadline exceeded", SkewMs: 3000}, now)
	for _, want := range []string{"JOB LEASES LOST", "for 40.0s", "context deadline exceeded", "clock: 3s ahead"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printJobLeases(&b, &apitype.JobLeases{Renewed: now}, now)
	printJobLeases(&b, nil, now)
	if b.String() != "" {
		t.Errorf("status of held leases: %q", b.String())
	}
}
