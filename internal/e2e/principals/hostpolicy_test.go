package principals

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// stdioFace sends h's requests: legacy ones on its initialized
// connection, or 2026-07-28 ones as the host client.
func stdioFace(h *mcpxtest.Host, name string, modern bool, client string) harness.PolicyFace {
	return harness.PolicyFace{Name: name, Modern: modern, Send: func(method string, params map[string]any) *jsonrpc.Message {
		if modern {
			params["_meta"] = harness.PolicyMeta(client)
		}
		return h.Response(h.Request(method, params), harness.WaitLong)
	}}
}

// hiddenJobs checks that face, a host filtered to demo__*, sees none of
// the jobs of hidden (secret's tools, a script it did not run) as any
// of mcpx's job and task methods would show them, and that it reads
// visible, whose text is visibleText.
func hiddenJobs(t *testing.T, f harness.PolicyFace, hidden []string, visible, visibleText string) {
	t.Helper()
	for _, id := range hidden {
		if text, isErr := f.ToolText(t, "mcpx_job", map[string]any{"job_id": id, "wait_seconds": 0}); !isErr || !strings.Contains(text, "no job has this id") {
			t.Errorf("%s: mcpx_job of hidden job %s: isError %v %q, want no job has this id", f.Name, id, isErr, text)
		}
		if text, isErr := f.ToolText(t, "mcpx_job_cancel", map[string]any{"job_id": id}); !isErr || !strings.Contains(text, "no job has this id") {
			t.Errorf("%s: mcpx_job_cancel of hidden job %s: isError %v %q, want no job has this id", f.Name, id, isErr, text)
		}
		methods := []string{"tasks/get", "tasks/cancel"}
		if !f.Modern {
			methods = append(methods, "tasks/result")
		}
		for _, m := range methods {
			got := f.Call(t, m, map[string]any{"taskId": id})
			if got.Error == nil || got.Error.Code != -32602 || !strings.Contains(got.Error.Message, "no job has this id") {
				t.Errorf("%s: %s of hidden job %s: %s, want -32602 no job has this id", f.Name, m, id, got.Encode())
			}
		}
	}
	if !f.Modern {
		var list struct {
			Tasks []struct{ TaskID string }
		}
		m := f.Call(t, "tasks/list", nil)
		if m.Error != nil || json.Unmarshal(m.Result, &list) != nil {
			t.Fatalf("%s: tasks/list: %s", f.Name, m.Encode())
		}
		var ids []string
		for _, tk := range list.Tasks {
			ids = append(ids, tk.TaskID)
		}
		for _, id := range hidden {
			if slices.Contains(ids, id) {
				t.Errorf("%s: tasks/list shows hidden job %s: %v", f.Name, id, ids)
			}
		}
		if !slices.Contains(ids, visible) {
			t.Errorf("%s: tasks/list lacks the job of an allowed tool, %s: %v", f.Name, visible, ids)
		}
	}
	if text, isErr := f.ToolText(t, "mcpx_job", map[string]any{"job_id": visible, "wait_seconds": 20}); isErr || text != visibleText {
		t.Errorf("%s: mcpx_job of the job of an allowed tool: isError %v %q, want %q", f.Name, isErr, text, visibleText)
	}
}

// TestHostFilterJobs: a host filtered to one server shares its principal
// with others (a stdio host the local user's, with the CLI and the other
// stdio hosts; a host of the default token with the token's other hosts),
// and sees none of their jobs of tools it may not call, nor of scripts it
// did not run: mcpx_job, mcpx_job_cancel, tasks/get, tasks/result,
// tasks/cancel and tasks/list answer as for an unknown id; it still
// reads the jobs of tools it may call. Over stdio and HTTP, legacy and
// 2026-07-28.
func TestHostFilterJobs(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"hosts": map[string]any{
			"mcpxtest": map[string]any{"tools": []string{"demo__*"}},
			"raw":      map[string]any{"tools": []string{"demo__*"}},
		}}, mcpxtest.Demo{Name: "demo"}, mcpxtest.Demo{Name: "secret"})

		// Stdio: the unfiltered host "boss" (2026-07-28 requests) and the
		// filtered host, legacy on a connection of its own and 2026-07-28.
		h := e.StartHost(mode, cfg)
		boss := stdioFace(h, "stdio boss", true, "boss")
		legacyConn := e.StartHost(mode, cfg)
		legacyConn.Initialize("2025-11-25")
		faces := []harness.PolicyFace{stdioFace(legacyConn, "stdio legacy", false, ""), stdioFace(h, "stdio 2026-07-28", true, "mcpxtest")}
		hidden := startHiddenJobs(t, boss, true)
		visible := boss.Background(t, "demo__sleep_then", map[string]any{"seconds": 0, "text": "visible"})
		if mode == mcpxtest.Daemon {
			// The CLI is the local user too, through the same daemon.
			var cli struct {
				JobID string `json:"job_id"`
			}
			out := harness.CliRun(t, e, cfg)(0, "call", "--background", "--json", "secret.sleep_then", `{"seconds": 0, "text": "the CLI's secret"}`)
			if err := json.Unmarshal([]byte(out), &cli); err != nil || cli.JobID == "" {
				t.Fatalf("mcpx call --background: %q", out)
			}
			hidden = append(hidden, cli.JobID)
		}
		for _, f := range faces {
			hiddenJobs(t, f, hidden, visible, "visible")
		}
		ownScript(t, faces[0])
		stillRunning(t, boss, hidden[1])

		// HTTP, the default token: "boss" and "raw" (filtered) share it.
		m := harness.StartHTTP(t, e, mode, cfg, false)
		bossHTTP := harness.HttpFace(t, harness.NewRawHost(t, m), "http boss", true, "boss")
		session := harness.NewRawHost(t, m)
		session.Initialize("2025-11-25")
		httpFaces := []harness.PolicyFace{harness.HttpFace(t, session, "http legacy", false, ""), harness.HttpFace(t, harness.NewRawHost(t, m), "http 2026-07-28", true, "raw")}
		// The in-process HTTP gateway of these tests runs no scripts.
		scripts := mode == mcpxtest.Daemon
		hidden = startHiddenJobs(t, bossHTTP, scripts)
		visible = bossHTTP.Background(t, "demo__sleep_then", map[string]any{"seconds": 0, "text": "visible over http"})
		for _, f := range httpFaces {
			hiddenJobs(t, f, hidden, visible, "visible over http")
		}
		if scripts {
			ownScript(t, httpFaces[0])
		}
		stillRunning(t, bossHTTP, hidden[1])
	})
}

// startHiddenJobs starts, as the unfiltered host boss, the jobs a host
// filtered to demo__* must not see: one of secret's that has completed,
// one that runs, and (with scripts) a script's that called secret.
func startHiddenJobs(t *testing.T, boss harness.PolicyFace, scripts bool) []string {
	t.Helper()
	done := boss.Background(t, "secret__sleep_then", map[string]any{"seconds": 0, "text": "the secret"})
	if text, _ := boss.ToolText(t, "mcpx_job", map[string]any{"job_id": done, "wait_seconds": 20}); text != "the secret" {
		t.Fatalf("boss reading its own job: %q", text)
	}
	long := boss.Background(t, "secret__wait", map[string]any{"seconds": 60})
	if !scripts {
		return []string{done, long}
	}
	m := boss.Call(t, "tools/call", map[string]any{"name": "mcpx_exec", "arguments": map[string]any{"background": true,
		"code": `return await tools.secret.sleep_then({seconds: 0, text: "the script's secret"})`}})
	if m.Error != nil {
		t.Fatalf("boss's background script: %s", m.Encode())
	}
	script := harness.JobOf(t, m.Result).JobID
	if text, _ := boss.ToolText(t, "mcpx_job", map[string]any{"job_id": script, "wait_seconds": 20}); !strings.Contains(text, "the script's secret") {
		t.Fatalf("boss reading its script's job: %q", text)
	}
	return []string{done, long, script}
}

// ownScript: a filtered host reads the job of a script it ran itself;
// its scripts, in the foreground or as jobs, may call, through tools.*
// and mcpx.call, only what its filter allows.
func ownScript(t *testing.T, f harness.PolicyFace) {
	t.Helper()
	for _, code := range []string{`return await tools.secret.echo({text: "x"})`, `return await mcpx.call("secret__echo", {text: "x"})`} {
		for _, background := range []bool{false, true} {
			m := f.Call(t, "tools/call", map[string]any{"name": "mcpx_exec", "arguments": map[string]any{"background": background, "code": code}})
			if m.Error != nil {
				t.Fatalf("%s: script: %s", f.Name, m.Encode())
			}
			res := m.Result
			if background {
				res = f.Call(t, "tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": harness.JobOf(t, m.Result).JobID, "wait_seconds": 20}}).Result
			}
			if !strings.Contains(string(res), `tool \"secret__echo\" is not allowed for this host`) {
				t.Errorf("%s: script %s (background %v): %s, want the filter to refuse its call", f.Name, code, background, res)
			}
		}
	}
	m := f.Call(t, "tools/call", map[string]any{"name": "mcpx_exec", "arguments": map[string]any{"background": true,
		"code": `return await tools.demo.sleep_then({seconds: 0, text: "my own script"})`}})
	if m.Error != nil {
		t.Fatalf("%s: background script: %s", f.Name, m.Encode())
	}
	id := harness.JobOf(t, m.Result).JobID
	if text, isErr := f.ToolText(t, "mcpx_job", map[string]any{"job_id": id, "wait_seconds": 20}); isErr || !strings.Contains(text, "my own script") {
		t.Errorf("%s: mcpx_job of its own script's job: isError %v %q", f.Name, isErr, text)
	}
}

// stillRunning: the hidden job the filtered hosts tried to cancel runs
// on; boss then cancels it.
func stillRunning(t *testing.T, boss harness.PolicyFace, id string) {
	t.Helper()
	m := boss.Call(t, "tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": id, "wait_seconds": 0}})
	if m.Error != nil || harness.JobOf(t, m.Result).Status != "running" {
		t.Errorf("the job filtered hosts tried to cancel: %s, want running", m.Encode())
	}
	if text, isErr := boss.ToolText(t, "mcpx_job_cancel", map[string]any{"job_id": id}); isErr || !strings.Contains(text, "cancelled") {
		t.Errorf("boss cancelling its job: isError %v %q", isErr, text)
	}
}
