package principals

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// allPrompts returns the names of every page of prompts/list.
func allPrompts(t *testing.T, f harness.PolicyFace) []string {
	t.Helper()
	var names []string
	for cursor, pages := "", 0; pages < 10; pages++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Prompts    []struct{ Name string }
			NextCursor string
		}
		if m := f.Call(t, "prompts/list", params); m.Error != nil || json.Unmarshal(m.Result, &page) != nil {
			t.Fatalf("%s: prompts/list: %s", f.Name, m.Encode())
		}
		for _, p := range page.Prompts {
			names = append(names, p.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			return names
		}
	}
	t.Fatalf("%s: prompts/list has more than 10 pages", f.Name)
	return nil
}

// TestPrincipalMatrixMCP: alice (a named token filtered to a__*), bob (a
// named token), the default token's holder, a stdio host filtered to
// a__* and an unfiltered one (both the local user, handed to the daemon
// by `mcpx serve`), over HTTP legacy and 2026-07-28 and stdio legacy and
// 2026-07-28. Another principal's job reads, cancels and lists as
// another's (mcpx_job, mcpx_job_cancel, tasks/*): never its result, and
// it runs on; the two stdio hosts share theirs, but the filtered one
// sees none of b's. Filtered hosts are refused b's tools every way and
// see nothing of b's resources, prompts or name; the others call and
// see them.
func TestPrincipalMatrixMCP(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	cfg := e.WriteConfig(map[string]any{
		"http":  map[string]any{"listen": "127.0.0.1:0"},
		"hosts": map[string]any{"alice": map[string]any{"tools": []string{"a__*"}}, "mcpxtest": map[string]any{"tools": []string{"a__*"}}},
	},
		mcpxtest.Demo{Name: "a", Args: []string{"-surface", "-resource-host", "a"}},
		mcpxtest.Demo{Name: "b", Args: []string{"-surface", "-resource-host", "b"}},
	)
	mint := func(name string) string {
		out, stderr, code := e.Run(harness.WaitLong, "token", "--name", name)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	tokA, tokB := mint("alice"), mint("bob")
	_, st := harness.StartV1Daemon(t, e, cfg)
	def, err := os.ReadFile(st.TokenFile)
	if err != nil || st.HTTP == "" {
		t.Fatalf("the daemon's HTTP listener: %+v %v", st, err)
	}
	instructions := map[string]string{} // of each legacy face
	httpActor := func(name, tok string, filtered bool) *harness.MatrixActor {
		m := &harness.HTTPMCPX{URL: st.HTTP, Token: tok}
		session := harness.NewRawHost(t, m)
		r := session.Do(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		var init struct{ Instructions string }
		if len(r.Msgs) != 1 || json.Unmarshal(r.Msgs[0].Result, &init) != nil {
			t.Fatalf("%s's initialize over HTTP: %d %s", name, r.Status, r.Body)
		}
		session.Initialize("2025-11-25")
		instructions[name+" http legacy"] = init.Instructions
		return &harness.MatrixActor{Name: name, Owner: name, Filtered: filtered, Faces: []harness.PolicyFace{
			harness.HttpFace(t, session, name+" http legacy", false, ""),
			harness.HttpFace(t, harness.NewRawHost(t, m), name+" http 2026-07-28", true, "matrix"),
		}}
	}
	alice, bob, dflt := httpActor("alice", tokA, true), httpActor("bob", tokB, false), httpActor("default", strings.TrimSpace(string(def)), false)
	legacyConn := e.StartHost(mcpxtest.Daemon, cfg)
	var init struct{ Instructions string }
	if err := json.Unmarshal(legacyConn.Initialize("2025-11-25"), &init); err != nil {
		t.Fatal(err)
	}
	instructions["filtered stdio legacy"] = init.Instructions
	h := e.StartHost(mcpxtest.Daemon, cfg)
	filtered := &harness.MatrixActor{Name: "filtered stdio", Owner: "local", Filtered: true, Faces: []harness.PolicyFace{
		stdioFace(legacyConn, "filtered stdio legacy", false, ""), stdioFace(h, "filtered stdio 2026-07-28", true, "mcpxtest"),
	}}
	boss := &harness.MatrixActor{Name: "stdio boss", Owner: "local", Faces: []harness.PolicyFace{stdioFace(h, "stdio boss 2026-07-28", true, "boss")}}
	actors := []*harness.MatrixActor{alice, bob, dflt, filtered, boss}

	// Each starts a job that is done and one that runs; boss one of b's.
	var jobs []harness.MatrixJob
	start := func(a *harness.MatrixActor, tool string, args map[string]any, text string) harness.MatrixJob {
		j := harness.MatrixJob{Id: a.Faces[0].Background(t, tool, args), Tool: tool, Text: text, By: a}
		if text == "" {
			jobs = append(jobs, j)
			return j
		}
		if got, isErr := a.Faces[0].ToolText(t, "mcpx_job", map[string]any{"job_id": j.Id, "wait_seconds": 20}); isErr || got != text {
			t.Fatalf("%s reading its own job: isError %v %q", a.Name, isErr, got)
		}
		jobs = append(jobs, j)
		return j
	}
	long := map[*harness.MatrixActor]harness.MatrixJob{}
	for i, a := range actors {
		start(a, "a__sleep_then", map[string]any{"seconds": 0, "text": a.Name + "'s secret"}, a.Name+"'s secret")
		// Distinct arguments: one principal's same call attaches to its job.
		long[a] = start(a, "a__wait", map[string]any{"seconds": 600 + i}, "")
	}
	start(boss, "b__sleep_then", map[string]any{"seconds": 0, "text": "boss's secret of b"}, "boss's secret of b")

	for _, r := range actors {
		for _, f := range r.Faces {
			var visible, invisible []string
			for _, j := range jobs {
				want := ""
				switch {
				case j.By.Owner != r.Owner:
					want = harness.ForeignJob
				case r.Filtered && strings.HasPrefix(j.Tool, "b__"):
					want = harness.HiddenText
				}
				if j.By != r || want != "" {
					harness.JobCell(t, f, j, want)
				}
				if want == "" {
					visible = append(visible, j.Id)
				} else {
					invisible = append(invisible, j.Id)
				}
			}
			if f.Modern {
				continue
			}
			ids := harness.TaskIDs(t, f)
			for _, id := range visible {
				if !slices.Contains(ids, id) {
					t.Errorf("%s: tasks/list lacks %s, a job it may read: %v", f.Name, id, ids)
				}
			}
			for _, id := range invisible {
				if slices.Contains(ids, id) {
					t.Errorf("%s: tasks/list shows %s, a job it may not read: %v", f.Name, id, ids)
				}
			}
		}
	}
	// The jobs others tried to cancel run on; the owner's principal
	// cancels them (the two stdio hosts each other's).
	for _, a := range actors {
		by := a
		switch a {
		case boss:
			by = filtered
		case filtered:
			by = boss
		}
		f := by.Faces[len(by.Faces)-1]
		m := f.Call(t, "tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": long[a].Id, "wait_seconds": 0}})
		if m.Error != nil || harness.JobOf(t, m.Result).Status != "running" {
			t.Errorf("%s's running job, after the others tried to cancel it: %s, want running", a.Name, m.Encode())
		}
		m = f.Call(t, "tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": long[a].Id}})
		if m.Error != nil || harness.JobOf(t, m.Result).Status != "cancelled" {
			t.Errorf("%s cancelling %s's running job: %s, want it cancelled", f.Name, a.Name, m.Encode())
		}
	}

	want := 0
	for _, a := range actors {
		for _, f := range a.Faces {
			want += harness.ToolCell(t, f, !a.Filtered, "b")
			if a.Filtered {
				in, ok := instructions[f.Name]
				if !ok {
					in = discoverInstructions(t, f)
				}
				hiddenServer(t, f, in)
			} else if got := allPrompts(t, f); !slices.Contains(got, "b__greet") {
				t.Errorf("%s: prompts %q, want b's too", f.Name, got)
			}
		}
	}
	if n := harness.Executions(e, "b", "echo"); n != want {
		t.Errorf("b's echo ran %d times, want %d (the unfiltered hosts' calls alone)", n, want)
	}
}
