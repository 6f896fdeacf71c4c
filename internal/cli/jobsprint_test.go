package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"mcpx/internal/apitype"
)

// TestJobOutput: jobs show, wait and the list print a job for a person,
// as call prints a call: a tool's text, a script as "script" with the
// string it returned unquoted, an error's words; testdata/help/jobs-output.txt
// holds what each prints.
func TestJobOutput(t *testing.T) {
	created := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	total := 5.0
	jobs := []apitype.Job{
		{ID: "job_tool", Server: "demo", Tool: "export", Status: "completed", Created: created, Finished: created.Add(5 * time.Second),
			Result: json.RawMessage(`{"content":[{"type":"text","text":"exported 1000 records in 5 parts"}],"structuredContent":{"records":1000}}`)},
		{ID: "job_script", Tool: "mcpx_exec", Status: "completed", Created: created, Finished: created.Add(time.Second),
			Result: json.RawMessage(`{"content":[{"type":"text","text":"\"Los Angeles\""},{"type":"text","text":"console:\nchecked 3"}]}`)},
		{ID: "job_object", Tool: "mcpx_exec", Status: "completed", Created: created,
			Result: json.RawMessage(`{"content":[{"type":"text","text":"{\"warmest\":\"Los Angeles\"}"}],"structuredContent":{"warmest":"Los Angeles"}}`)},
		{ID: "job_toolerror", Server: "demo", Tool: "fail", Status: "completed", Created: created,
			Result: json.RawMessage(`{"content":[{"type":"text","text":"it broke"}],"isError":true}`)},
		{ID: "job_failed", Server: "demo", Tool: "wait", Status: "interrupted", Created: created, Error: "the daemon stopped during the call"},
		{ID: "job_running", Server: "demo", Tool: "export", Status: "running", Created: created, Progress: &apitype.Progress{Progress: 2, Total: &total, Message: "part 2"}},
		{ID: "job_late", Server: "demo", Tool: "wait", Status: "interrupted", Attempt: 2, Created: created, Finished: created.Add(4 * time.Second),
			Error: "its mcpx stopped renewing its lease", Note: "Attempt 1 of this call went on at the mcpx that lost its lease (mcpx-a) and ended there at 2026-07-28T12:00:09Z as completed: that end is kept with the job as its late result.",
			Late: &apitype.LateEnd{Status: "completed", At: created.Add(9 * time.Second), Result: json.RawMessage(`{"content":[{"type":"text","text":"waited 9s"}]}`)}},
		{ID: "job_rerun", Server: "demo", Tool: "sleep_then", Status: "completed", Attempt: 2, Created: created, Finished: created.Add(8 * time.Second),
			Result: json.RawMessage(`{"content":[{"type":"text","text":"slept 6s (attempt 2)"}]}`),
			Late:   &apitype.LateEnd{Status: "failed", At: created.Add(5 * time.Second), Error: "upstream closed the connection"}},
	}
	var all bytes.Buffer
	for i := range jobs {
		j := &jobs[i]
		env, out, errb := fakeEnv(nil)
		printJob(env, j)
		fmt.Fprintf(&all, "$ mcpx jobs show %s\n%s", j.ID, out)
		if j.Status != "running" {
			out.Reset()
			err := printJobOutcome(env, j)
			code := report(env, cmdJobs(), err)
			fmt.Fprintf(&all, "$ mcpx jobs wait %s\n%s%s[exit %d]\n", j.ID, out, errb, code)
		}
	}
	env, out, _ := fakeEnv(nil)
	printJobs(env, jobs, created.Add(time.Minute))
	fmt.Fprintf(&all, "$ mcpx jobs\n%s", out)
	env, out, _ = fakeEnv(nil)
	printStatusJobs(env, jobs[5:6], created.Add(time.Minute))
	fmt.Fprintf(&all, "$ mcpx status (jobs)\n%s", out)
	golden(t, "jobs-output", all.String())
}

// TestDoctorOtherDaemon: doctor names a daemon of the built-in config as
// such, not as config "", and says how to stop any other daemon.
func TestDoctorOtherDaemon(t *testing.T) {
	for _, tc := range []struct {
		st   apitype.Status
		want string
	}{
		{apitype.Status{PID: 42, Version: "v1"}, "a daemon for the built-in config (no config file) runs: pid 42, version v1; stop it with mcpx stop (from the binary that started it) or kill 42"},
		{apitype.Status{PID: 7, Version: "v2", Config: "/c.json"}, "a daemon for config /c.json runs: pid 7, version v2; stop it with mcpx stop --config /c.json (from the binary that started it) or kill 7"},
	} {
		got := fmt.Sprintf("a daemon for %s runs: pid %d, version %s; %s", configName(tc.st.Config), tc.st.PID, tc.st.Version, stopHint(&tc.st))
		if got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
