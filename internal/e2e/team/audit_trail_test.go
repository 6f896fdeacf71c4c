package team

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/audit"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
	"mcpx/internal/store/storetest"
)

// The audit trail: a real daemon and the demo upstream run a matrix of
// calls, jobs, a cancel, refusals, a host's calls and background job and
// admin actions,
// and the audit log holds exactly their lines, in its file and in the
// store's table (SQLite, and PostgreSQL), which mcpx audit queries.

// auditLine is what the matrix asserts of one record.
type auditLine struct{ kind, face, host, tool, outcome, job string }

func (l auditLine) String() string {
	return fmt.Sprintf("%s %s/%s %s %s %s", l.kind, l.face, l.host, l.tool, l.outcome, l.job)
}

func TestAuditTrail(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { auditTrail(t, "") })
	t.Run("postgres", func(t *testing.T) { auditTrail(t, storetest.PostgresURL(t)) })
}

func auditTrail(t *testing.T, pg string) {
	e := mcpxtest.NewEnv(t)
	file := e.Path("audit.jsonl")
	settings := map[string]any{
		"audit": map[string]any{"file": file},
		"hosts": map[string]any{"mcpxtest": map[string]any{"tools": []string{"demo__sleep_then"}}},
	}
	if pg != "" {
		settings["store"] = pg
	}
	cfg := e.WriteConfig(settings, mcpxtest.Demo{Name: "demo"})
	run := harness.CliRun(t, e, cfg)

	run(0, "call", "demo.sleep_then", `{"text": "secret words", "seconds": 0}`)
	run(1, "call", "demo.fail", `{}`)
	done := jobIDOf(t, run(0, "call", "--background", "--json", "demo.sleep_then", `{"seconds": 0, "text": "bg"}`))
	run(0, "jobs", "wait", done)
	long := strings.TrimSpace(run(0, "call", "--background", "demo.wait", `{"seconds": 60}`))
	run(0, "jobs", "cancel", long)

	h := e.StartHost(mcpxtest.Daemon, cfg)
	h.Initialize("2025-06-18")
	ok := h.Request("tools/call", map[string]any{"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0, "text": "host"}})
	h.Result(ok, harness.RelayWait)
	bg := h.Request("tools/call", map[string]any{"name": "mcpx_call", "arguments": map[string]any{"background": true, "name": "demo__sleep_then", "arguments": map[string]any{"seconds": 0, "text": "host bg"}}})
	hostJob := harness.JobOf(t, h.Result(bg, harness.RelayWait)).JobID
	refused := h.Request("tools/call", map[string]any{"name": "demo__wait", "arguments": map[string]any{"seconds": 1}})
	if m := h.Response(refused, harness.RelayWait); !strings.Contains(string(m.Encode()), "not allowed for this host") {
		t.Fatalf("a filtered tool's call: %s", m.Encode())
	}

	// The live view's own actions: a call's cancel, a restart, a job's
	// cancel, each recorded as /v1's are.
	view := liveView(t, e, cfg)
	slow := h.Request("tools/call", map[string]any{"name": "demo__sleep_then", "arguments": map[string]any{"seconds": 60, "text": "slow"}})
	var callID uint64
	harness.WaitStatus(t, e, cfg, "the slow call in flight", func(st apitype.Status) bool {
		for _, c := range st.Calls {
			if strings.HasSuffix(c.Tool, "sleep_then") {
				callID = c.ID
				return true
			}
		}
		return false
	})
	if code := view(fmt.Sprintf("/ui/calls/%d/cancel", callID)); code != http.StatusNoContent {
		t.Fatalf("the live view's cancel of a call: %d", code)
	}
	h.Response(slow, harness.RelayWait)
	h.Close()
	if code := view("/ui/servers/demo/restart"); code != http.StatusNoContent {
		t.Fatalf("the live view's restart: %d", code)
	}
	viewed := strings.TrimSpace(run(0, "call", "--background", "demo.wait", `{"seconds": 60}`))
	if code := view("/ui/jobs/" + viewed + "/cancel"); code != http.StatusNoContent {
		t.Fatalf("the live view's cancel of a job: %d", code)
	}
	run(0, "reload")

	want := []auditLine{
		{"call", "socket", "", "sleep_then", "ok", ""},
		{"call", "socket", "", "fail", "tool_error", ""},
		{"job.start", "socket", "", "sleep_then", "running", "done"},
		{"call", "socket", "", "sleep_then", "ok", "done"},
		{"job.end", "socket", "", "sleep_then", "completed", "done"},
		{"job.start", "socket", "", "wait", "running", "long"},
		{"job.cancel", "socket", "", "wait", "cancelled", "long"},
		{"call", "socket", "", "wait", "cancelled", "long"},
		{"job.end", "socket", "", "wait", "cancelled", "long"},
		{"call", "stdio", "mcpxtest", "sleep_then", "ok", ""},
		{"refusal", "stdio", "mcpxtest", "wait", "refused", ""},
		{"job.promote", "stdio", "mcpxtest", "sleep_then", "running", "host"},
		{"call", "stdio", "mcpxtest", "sleep_then", "ok", "host"},
		{"job.end", "stdio", "mcpxtest", "sleep_then", "completed", "host"},
		{"admin", "socket", "", "", "ok", ""}, // mcpx ui
		{"call", "stdio", "mcpxtest", "sleep_then", "cancelled", ""},
		{"call.cancel", "socket", "", "", "cancelled", ""},
		{"admin", "socket", "", "", "ok", ""},
		{"job.start", "socket", "", "wait", "running", "viewed"},
		{"job.cancel", "socket", "", "wait", "cancelled", "viewed"},
		{"call", "socket", "", "wait", "cancelled", "viewed"},
		{"job.end", "socket", "", "wait", "cancelled", "viewed"},
		{"admin", "socket", "", "", "ok", ""},
	}
	jobName := map[string]string{done: "done", long: "long", hostJob: "host", viewed: "viewed"}
	lines := func(recs []audit.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, auditLine{string(r.Kind), r.Face, r.Host, r.Tool, r.Outcome, jobName[r.Job]}.String())
		}
		slices.Sort(out)
		return out
	}
	var wantLines []string
	for _, l := range want {
		wantLines = append(wantLines, l.String())
	}
	slices.Sort(wantLines)

	// The store's table, through mcpx audit, once the writer has caught up.
	var stored []audit.Record
	deadline := time.Now().Add(harness.RelayWait)
	for {
		var got struct{ Records []audit.Record }
		if err := json.Unmarshal([]byte(run(0, "audit", "--json", "--limit", "1000")), &got); err != nil {
			t.Fatal(err)
		}
		stored = got.Records
		if len(stored) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if diff := cmpLines(wantLines, lines(stored)); diff != "" {
		t.Errorf("the store's audit table:\n%s", diff)
	}
	// Queries narrow by tool and by outcome.
	var byTool struct{ Records []audit.Record }
	if err := json.Unmarshal([]byte(run(0, "audit", "--json", "--tool", "wait", "--kind", "call")), &byTool); err != nil || len(byTool.Records) != 2 || byTool.Records[0].Outcome != "cancelled" || byTool.Records[1].Outcome != "cancelled" {
		t.Errorf("mcpx audit --tool wait --kind call: %+v %v", byTool.Records, err)
	}
	if out := run(0, "audit", "--outcome", "refused"); !strings.Contains(out, "refusal") || strings.Count(out, "\n") != 2 {
		t.Errorf("mcpx audit --outcome refused:\n%s", out)
	}

	// The file has the shutdown too.
	e.StopDaemons()
	fromFile := readAuditFile(t, file)
	wantLines = append(wantLines, auditLine{"admin", "socket", "", "", "ok", ""}.String())
	slices.Sort(wantLines)
	if diff := cmpLines(wantLines, lines(fromFile)); diff != "" {
		t.Errorf("the audit file:\n%s", diff)
	}

	for _, r := range fromFile {
		switch {
		case r.Kind == "call" && r.ArgsSHA256 == "":
			t.Errorf("a call without its arguments' hash: %+v", r)
		case r.Kind == "call" && r.Tool == "sleep_then" && r.Job == "" && r.Face == "socket":
			if want := audit.ArgsHash([]byte(`{"seconds":0,"text":"secret words"}`)); r.ArgsSHA256 != want {
				t.Errorf("the first call's hash %s, want %s", r.ArgsSHA256, want)
			}
			if r.Principal != "local" || r.Replica == "" {
				t.Errorf("the first call: %+v", r)
			}
		case r.Kind == "refusal" && !strings.Contains(r.Detail, "not allowed for this host"):
			t.Errorf("the refusal does not say why: %+v", r)
		case r.Kind == "admin" && r.Action == "POST "+apitype.PathRestart:
			if r.Server != "demo" || r.Detail != "the live view" || r.Principal != "local" {
				t.Errorf("the live view's restart: %+v", r)
			}
		case r.Kind == "admin" && r.Action != "POST /v0/reload" && r.Action != "POST /v0/shutdown" && r.Action != "POST /v0/ui/link":
			t.Errorf("the admin action: %+v", r)
		case r.Kind == "call.cancel" && (r.Principal != "local" || !strings.Contains(r.Detail, "interrupted by user")):
			t.Errorf("the live view's cancel of a call: %+v", r)
		case r.Kind == "job.cancel" && r.Job == viewed && (r.Principal != "local" || r.Detail != "the live view"):
			t.Errorf("the live view's cancel of a job: %+v", r)
		}
	}
	if b, _ := os.ReadFile(file); bytes.Contains(b, []byte("secret words")) {
		t.Errorf("the arguments' content is in the audit log:\n%s", b)
	}
}

func jobIDOf(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || !strings.HasPrefix(v.JobID, "job_") {
		t.Fatalf("not a job id: %q", out)
	}
	return v.JobID
}

func readAuditFile(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// cmpLines says how got differs from want, both sorted: "" if not.
func cmpLines(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	return "want:\n  " + strings.Join(want, "\n  ") + "\ngot:\n  " + strings.Join(got, "\n  ")
}
