package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
)

// mcpx status says when the daemon lost its job leases, why, what that
// means (another replica may take its jobs; with a store of its own, none
// does), and how far its clock is off the store's; nothing when all is
// well. testdata/help/status-leases.txt holds what each prints.
func TestPrintJobLeases(t *testing.T) {
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	var all strings.Builder
	for _, c := range []struct {
		name string
		l    *apitype.JobLeases
	}{
		{"lost, shared store", &apitype.JobLeases{Lost: true, Renewed: now.Add(-40 * time.Second), Error: "renewing job leases: context deadline exceeded", SkewMs: 3000}},
		{"lost, its own store", &apitype.JobLeases{Lost: true, Exclusive: true, Renewed: now.Add(-40 * time.Second), Error: "renewing job leases: database or disk is full"}},
		{"lost since start, its own store", &apitype.JobLeases{Lost: true, Exclusive: true}},
		{"the store's file truncated", &apitype.JobLeases{Lost: true, Exclusive: true, FileLost: true, Renewed: now.Add(-40 * time.Second),
			Error: "renewing job leases: the job store file /home/u/.local/state/mcpx/jobs.db was truncated to 0 bytes (it had 12288) while mcpx ran: jobs can no longer be kept (restart mcpx to make a new store)"}},
		{"a renewal failed", &apitype.JobLeases{Renewed: now.Add(-5 * time.Second), Error: "renewing job leases: context deadline exceeded"}},
		{"held", &apitype.JobLeases{Renewed: now}},
		{"held, exclusive", &apitype.JobLeases{Renewed: now, Exclusive: true}},
		{"no jobs", nil},
	} {
		var b strings.Builder
		printJobLeases(&b, c.l, now)
		fmt.Fprintf(&all, "# %s\n%s", c.name, b.String())
	}
	golden(t, "status-leases", all.String())
}
