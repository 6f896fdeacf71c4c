package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/mcpxtest"
)

// The principal matrix: every principal, on each of its MCP faces, tries
// every operation on every other principal's jobs, tasks, tools,
// resources and prompts, and each cell says what must come of it.

// matrixActor is one host (or one token's hosts) of the matrix.
type matrixActor struct {
	name     string
	owner    string // the principal that owns its jobs: actors of one owner share them
	filtered bool   // its host filter allows the tools of server a alone
	faces    []policyFace
}

// matrixJob is a job an actor started.
type matrixJob struct {
	id, tool, text string // text: a done job's result; "" for one that runs
	by             *matrixActor
}

// What a host is told of a job it may not see.
const (
	foreignJob = "the job belongs to another principal"
	hiddenText = "no job has this id"
)

// jobCell checks what face f of reader gets for each job-reading
// operation on j: want is "" (it reads j), foreignJob or hiddenText.
func jobCell(t *testing.T, f policyFace, j matrixJob, want string) {
	t.Helper()
	cell := fmt.Sprintf("%s on %s's job of %s", f.name, j.by.name, j.tool)
	text, isErr := f.toolText(t, "mcpx_job", map[string]any{"job_id": j.id, "wait_seconds": 0})
	switch {
	case want != "":
		if !isErr || !strings.Contains(text, want) || j.text != "" && strings.Contains(text, j.text) {
			t.Errorf("%s: mcpx_job: isError %v %q, want %q", cell, isErr, text, want)
		}
		if text, isErr := f.toolText(t, "mcpx_job_cancel", map[string]any{"job_id": j.id}); !isErr || !strings.Contains(text, want) {
			t.Errorf("%s: mcpx_job_cancel: isError %v %q, want %q", cell, isErr, text, want)
		}
	case j.text != "" && (isErr || text != j.text):
		t.Errorf("%s: mcpx_job: isError %v %q, want %q", cell, isErr, text, j.text)
	case j.text == "" && (isErr || !strings.Contains(text, "running")):
		t.Errorf("%s: mcpx_job: isError %v %q, want it running", cell, isErr, text)
	}
	methods := []string{"tasks/get"}
	if want != "" {
		methods = append(methods, "tasks/cancel")
	}
	if !f.modern && j.text != "" {
		methods = append(methods, "tasks/result")
	}
	for _, m := range methods {
		got := f.call(t, m, map[string]any{"taskId": j.id})
		if want == "" && got.Error != nil || want != "" && (got.Error == nil || got.Error.Code != -32602 || !strings.Contains(got.Error.Message, want)) {
			t.Errorf("%s: %s: %s, want %q", cell, m, got.Encode(), or(want, "it read"))
		}
		if want != "" && j.text != "" && strings.Contains(string(got.Encode()), j.text) {
			t.Errorf("%s: %s answers with the job's result: %s", cell, m, got.Encode())
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// taskIDs returns the ids tasks/list gives face f.
func taskIDs(t *testing.T, f policyFace) []string {
	t.Helper()
	var list struct {
		Tasks      []struct{ TaskID string }
		NextCursor string
	}
	m := f.call(t, "tasks/list", nil)
	if m.Error != nil || json.Unmarshal(m.Result, &list) != nil || list.NextCursor != "" {
		t.Fatalf("%s: tasks/list: %s", f.name, m.Encode())
	}
	var ids []string
	for _, tk := range list.Tasks {
		ids = append(ids, tk.TaskID)
	}
	return ids
}

// toolCell checks that face f calls server b's echo, directly, through
// mcpx_call and through mcpx_exec's tools.* and mcpx.call, if allowed,
// and else is refused with the filter's message each way; it returns
// how many calls were to reach b.
func toolCell(t *testing.T, f policyFace, allowed bool, server string) int {
	t.Helper()
	tool := server + "__echo"
	refusal := fmt.Sprintf(`tool %q is not allowed for this host`, tool)
	ways := []struct {
		way  string
		name string
		args map[string]any
	}{
		{"tools/call", tool, map[string]any{"pin": "x"}},
		{"mcpx_call", "mcpx_call", map[string]any{"name": tool, "arguments": map[string]any{"pin": "x"}}},
		{"mcpx_exec tools.*", "mcpx_exec", map[string]any{"code": fmt.Sprintf(`return await tools.%s.echo({pin: "x"})`, server)}},
		{"mcpx_exec mcpx.call", "mcpx_exec", map[string]any{"code": fmt.Sprintf(`return await mcpx.call(%q, {pin: "x"})`, tool)}},
	}
	for _, w := range ways {
		m := f.call(t, "tools/call", map[string]any{"name": w.name, "arguments": w.args})
		got := string(m.Encode())
		if !allowed && !strings.Contains(strings.ReplaceAll(got, `\"`, `"`), refusal) {
			t.Errorf("%s: %s of %s: %s, want %q", f.name, w.way, tool, got, refusal)
		}
		if allowed && (m.Error != nil || strings.Contains(got, `"isError":true`) || !strings.Contains(got, `pin`)) {
			t.Errorf("%s: %s of %s: %s, want its result", f.name, w.way, tool, got)
		}
	}
	listed := strings.Contains(string(f.call(t, "tools/list", nil).Result), `"name":"`+tool+`"`)
	if listed != allowed {
		t.Errorf("%s: tools/list lists %s: %v, want %v", f.name, tool, listed, allowed)
	}
	if allowed {
		return len(ways)
	}
	return 0
}

// allPrompts returns the names of every page of prompts/list.
func allPrompts(t *testing.T, f policyFace) []string {
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
		if m := f.call(t, "prompts/list", params); m.Error != nil || json.Unmarshal(m.Result, &page) != nil {
			t.Fatalf("%s: prompts/list: %s", f.name, m.Encode())
		}
		for _, p := range page.Prompts {
			names = append(names, p.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			return names
		}
	}
	t.Fatalf("%s: prompts/list has more than 10 pages", f.name)
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
		out, stderr, code := e.Run(waitLong, "token", "--name", name)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	tokA, tokB := mint("alice"), mint("bob")
	_, st := startV1Daemon(t, e, cfg)
	def, err := os.ReadFile(st.TokenFile)
	if err != nil || st.HTTP == "" {
		t.Fatalf("the daemon's HTTP listener: %+v %v", st, err)
	}
	instructions := map[string]string{} // of each legacy face
	httpActor := func(name, tok string, filtered bool) *matrixActor {
		m := &httpMCPX{URL: st.HTTP, Token: tok}
		session := newRawHost(t, m)
		r := session.do(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		var init struct{ Instructions string }
		if len(r.Msgs) != 1 || json.Unmarshal(r.Msgs[0].Result, &init) != nil {
			t.Fatalf("%s's initialize over HTTP: %d %s", name, r.Status, r.Body)
		}
		session.initialize("2025-11-25")
		instructions[name+" http legacy"] = init.Instructions
		return &matrixActor{name: name, owner: name, filtered: filtered, faces: []policyFace{
			httpFace(t, session, name+" http legacy", false, ""),
			httpFace(t, newRawHost(t, m), name+" http 2026-07-28", true, "matrix"),
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
	filtered := &matrixActor{name: "filtered stdio", owner: "local", filtered: true, faces: []policyFace{
		stdioFace(legacyConn, "filtered stdio legacy", false, ""), stdioFace(h, "filtered stdio 2026-07-28", true, "mcpxtest"),
	}}
	boss := &matrixActor{name: "stdio boss", owner: "local", faces: []policyFace{stdioFace(h, "stdio boss 2026-07-28", true, "boss")}}
	actors := []*matrixActor{alice, bob, dflt, filtered, boss}

	// Each starts a job that is done and one that runs; boss one of b's.
	var jobs []matrixJob
	start := func(a *matrixActor, tool string, args map[string]any, text string) matrixJob {
		j := matrixJob{id: a.faces[0].background(t, tool, args), tool: tool, text: text, by: a}
		if text == "" {
			jobs = append(jobs, j)
			return j
		}
		if got, isErr := a.faces[0].toolText(t, "mcpx_job", map[string]any{"job_id": j.id, "wait_seconds": 20}); isErr || got != text {
			t.Fatalf("%s reading its own job: isError %v %q", a.name, isErr, got)
		}
		jobs = append(jobs, j)
		return j
	}
	long := map[*matrixActor]matrixJob{}
	for i, a := range actors {
		start(a, "a__sleep_then", map[string]any{"seconds": 0, "text": a.name + "'s secret"}, a.name+"'s secret")
		// Distinct arguments: one principal's same call attaches to its job.
		long[a] = start(a, "a__wait", map[string]any{"seconds": 600 + i}, "")
	}
	start(boss, "b__sleep_then", map[string]any{"seconds": 0, "text": "boss's secret of b"}, "boss's secret of b")

	for _, r := range actors {
		for _, f := range r.faces {
			var visible, invisible []string
			for _, j := range jobs {
				want := ""
				switch {
				case j.by.owner != r.owner:
					want = foreignJob
				case r.filtered && strings.HasPrefix(j.tool, "b__"):
					want = hiddenText
				}
				if j.by != r || want != "" {
					jobCell(t, f, j, want)
				}
				if want == "" {
					visible = append(visible, j.id)
				} else {
					invisible = append(invisible, j.id)
				}
			}
			if f.modern {
				continue
			}
			ids := taskIDs(t, f)
			for _, id := range visible {
				if !slices.Contains(ids, id) {
					t.Errorf("%s: tasks/list lacks %s, a job it may read: %v", f.name, id, ids)
				}
			}
			for _, id := range invisible {
				if slices.Contains(ids, id) {
					t.Errorf("%s: tasks/list shows %s, a job it may not read: %v", f.name, id, ids)
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
		f := by.faces[len(by.faces)-1]
		m := f.call(t, "tools/call", map[string]any{"name": "mcpx_job", "arguments": map[string]any{"job_id": long[a].id, "wait_seconds": 0}})
		if m.Error != nil || jobOf(t, m.Result).Status != "running" {
			t.Errorf("%s's running job, after the others tried to cancel it: %s, want running", a.name, m.Encode())
		}
		m = f.call(t, "tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": long[a].id}})
		if m.Error != nil || jobOf(t, m.Result).Status != "cancelled" {
			t.Errorf("%s cancelling %s's running job: %s, want it cancelled", f.name, a.name, m.Encode())
		}
	}

	want := 0
	for _, a := range actors {
		for _, f := range a.faces {
			want += toolCell(t, f, !a.filtered, "b")
			if a.filtered {
				in, ok := instructions[f.name]
				if !ok {
					in = discoverInstructions(t, f)
				}
				hiddenServer(t, f, in)
			} else if got := allPrompts(t, f); !slices.Contains(got, "b__greet") {
				t.Errorf("%s: prompts %q, want b's too", f.name, got)
			}
		}
	}
	if n := executions(e, "b", "echo"); n != want {
		t.Errorf("b's echo ran %d times, want %d (the unfiltered hosts' calls alone)", n, want)
	}
}
