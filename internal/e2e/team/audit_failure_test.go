package team

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// auditStats reads the audit writer's state from mcpx status.
func auditStats(t *testing.T, run func(int, ...string) string) apitype.AuditStats {
	t.Helper()
	var st apitype.Status
	if err := json.Unmarshal([]byte(run(0, "status", "--json")), &st); err != nil || st.Audit == nil {
		t.Fatalf("mcpx status --json: %v, audit %v", err, st.Audit)
	}
	return *st.Audit
}

// waitAudit waits up to relayWait for the audit writer to be in the
// state cond wants.
func waitAudit(t *testing.T, run func(int, ...string) string, what string, cond func(apitype.AuditStats) bool) {
	t.Helper()
	deadline := time.Now().Add(harness.RelayWait)
	for {
		s := auditStats(t, run)
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit log: no %s within %s: %+v", what, harness.RelayWait, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Failing closed (the default), a store that loses the audit table
// refuses tool calls until it has it back; the records kept meanwhile
// are written then, the refusal's among them.
func TestAuditFailsClosedWhenTheStoreGoesAway(t *testing.T) {
	pg := storetest.PostgresURL(t)
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"store": pg, "audit": map[string]any{}}, mcpxtest.Demo{Name: "demo"})
	run := harness.CliRun(t, e, cfg)
	call := `{"seconds": 0, "text": "x"}`
	run(0, "call", "demo.sleep_then", call)
	waitAudit(t, run, "first record", func(s apitype.AuditStats) bool { return s.Written == 1 })

	alter := func(q string) {
		if err := storetest.QueryRow(t, pg, q); err != nil && !strings.Contains(err.Error(), "no rows") {
			t.Fatal(err)
		}
	}
	alter(`ALTER TABLE audit RENAME TO audit_away`)
	run(0, "call", "demo.sleep_then", call) // admitted: its record is what fails
	waitAudit(t, run, "failure", func(s apitype.AuditStats) bool { return s.Failing })
	if out := run(3, "call", "demo.sleep_then", call); !strings.Contains(out, "the audit log cannot be written") {
		t.Fatalf("a call while the audit log fails closed: %s", out)
	}
	if n := harness.Executions(e, "demo", "sleep_then"); n != 2 {
		t.Fatalf("the upstream ran %d calls, want 2 (the refused one never reached it)", n)
	}
	alter(`ALTER TABLE audit_away RENAME TO audit`)
	waitAudit(t, run, "recovery", func(s apitype.AuditStats) bool { return !s.Failing && s.Queued == 0 })
	run(0, "call", "demo.sleep_then", call)
	waitAudit(t, run, "last record", func(s apitype.AuditStats) bool { return s.Written == 4 && s.Lost == 0 })
	var got apitype.AuditRecords
	if err := json.Unmarshal([]byte(run(0, "audit", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range got.Records {
		kinds = append(kinds, r.Kind+" "+r.Outcome)
	}
	if want := "call ok,refusal refused,call ok,call ok"; strings.Join(kinds, ",") != want {
		t.Errorf("records, newest first: %v, want %s", kinds, want)
	}
}

// Failing open, a file that cannot take a line (a full device) loses
// the records, counted, and refuses nothing.
func TestAuditFailsOpenOnAFullDevice(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{"audit": map[string]any{"file": "/dev/full", "store": false, "onFailure": "open"}}, mcpxtest.Demo{Name: "demo"})
	run := harness.CliRun(t, e, cfg)
	call := `{"seconds": 0, "text": "x"}`
	run(0, "call", "demo.sleep_then", call)
	waitAudit(t, run, "lost record", func(s apitype.AuditStats) bool { return s.Lost == 1 && s.Failures == 1 })
	run(0, "call", "demo.sleep_then", call)
	waitAudit(t, run, "second lost record", func(s apitype.AuditStats) bool { return s.Lost == 2 && !s.Failing })
}
