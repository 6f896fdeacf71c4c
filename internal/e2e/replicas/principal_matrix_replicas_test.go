package replicas

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestPrincipalMatrixReplicas: the core rows of the principal matrix on
// two replicas sharing PostgreSQL behind nginx, over HTTP legacy and
// 2026-07-28 straight to each replica. bob's jobs, started through
// replica 0, read as another principal's to alice on both replicas
// (mcpx_job, mcpx_job_cancel, tasks/*, never their result, left out of
// tasks/list) and run on; bob reads, lists and cancels them through
// replica 1. alice's filter (demo__*) refuses secret's echo on both
// replicas, directly, through mcpx_call and mcpx_exec; bob calls it.
func TestPrincipalMatrixReplicas(t *testing.T) {
	c := harness.StartClusterWith(t, harness.ClusterOpts{
		Jobs:    map[string]any{"leaseTerm": "5s"},
		Hosts:   map[string]any{"alice": map[string]any{"tools": []string{"demo__*"}}},
		Servers: []mcpxtest.Demo{{Name: "demo"}, {Name: "secret"}},
	})
	op := mcpxtest.NewEnv(t)
	cfg := op.WriteConfig(map[string]any{"store": c.PG}, mcpxtest.Demo{Name: "demo"})
	faces := func(name string) [][]harness.PolicyFace { // by replica
		out, stderr, code := op.Run(harness.WaitLong, "token", "--name", name, "--config", cfg)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		var fs [][]harness.PolicyFace
		for i, r := range c.Replicas {
			m := &harness.HTTPMCPX{URL: r.URL, Token: strings.TrimSpace(out)}
			session := harness.NewRawHost(t, m)
			session.Initialize("2025-11-25")
			fs = append(fs, []harness.PolicyFace{
				harness.HttpFace(t, session, fmt.Sprintf("%s http legacy at replica %d", name, i), false, ""),
				harness.HttpFace(t, harness.NewRawHost(t, m), fmt.Sprintf("%s http 2026-07-28 at replica %d", name, i), true, "matrix"),
			})
		}
		return fs
	}
	alice, bob := faces("alice"), faces("bob")
	bobs := &harness.MatrixActor{Name: "bob", Owner: "bob", Faces: bob[0]}

	done := harness.MatrixJob{Id: bob[0][1].Background(t, "demo__sleep_then", map[string]any{"seconds": 0, "text": "bob's secret"}), Tool: "demo__sleep_then", Text: "bob's secret", By: bobs}
	if text, isErr := bob[0][1].ToolText(t, "mcpx_job", map[string]any{"job_id": done.Id, "wait_seconds": 20}); isErr || text != done.Text {
		t.Fatalf("bob reading his job at replica 0: isError %v %q", isErr, text)
	}
	running := harness.MatrixJob{Id: bob[0][1].Background(t, "demo__wait", map[string]any{"seconds": 600}), Tool: "demo__wait", By: bobs}
	for _, f := range slices.Concat(alice...) {
		for _, j := range []harness.MatrixJob{done, running} {
			harness.JobCell(t, f, j, harness.ForeignJob)
		}
		if !f.Modern {
			if ids := harness.TaskIDs(t, f); slices.Contains(ids, done.Id) || slices.Contains(ids, running.Id) {
				t.Errorf("%s: tasks/list shows bob's jobs: %v", f.Name, ids)
			}
		}
	}
	for _, f := range bob[1] {
		for _, j := range []harness.MatrixJob{done, running} {
			harness.JobCell(t, f, j, "")
		}
		if !f.Modern {
			if ids := harness.TaskIDs(t, f); !slices.Contains(ids, done.Id) || !slices.Contains(ids, running.Id) {
				t.Errorf("%s: tasks/list lacks bob's jobs: %v", f.Name, ids)
			}
		}
	}
	m := bob[1][1].Call(t, "tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": running.Id}})
	if m.Error != nil || harness.JobOf(t, m.Result).Status != "cancelled" {
		t.Errorf("bob cancelling his running job at replica 1: %s, want it cancelled", m.Encode())
	}

	want := 0
	for i := range c.Replicas {
		for _, f := range alice[i] {
			harness.ToolCell(t, f, false, "secret")
		}
		for _, f := range bob[i] {
			want += harness.ToolCell(t, f, true, "secret")
		}
	}
	n := 0
	for _, e := range c.Envs {
		n += harness.Executions(e, "secret", "echo")
	}
	if n != want {
		t.Errorf("secret's echo ran %d times on the replicas, want %d (bob's calls alone)", n, want)
	}
}
