package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

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
	c := startClusterWith(t, clusterOpts{
		jobs:    map[string]any{"leaseTerm": "5s"},
		hosts:   map[string]any{"alice": map[string]any{"tools": []string{"demo__*"}}},
		servers: []mcpxtest.Demo{{Name: "demo"}, {Name: "secret"}},
	})
	op := mcpxtest.NewEnv(t)
	cfg := op.WriteConfig(map[string]any{"store": c.PG}, mcpxtest.Demo{Name: "demo"})
	faces := func(name string) [][]policyFace { // by replica
		out, stderr, code := op.Run(waitLong, "token", "--name", name, "--config", cfg)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		var fs [][]policyFace
		for i, r := range c.Replicas {
			m := &httpMCPX{URL: r.URL, Token: strings.TrimSpace(out)}
			session := newRawHost(t, m)
			session.initialize("2025-11-25")
			fs = append(fs, []policyFace{
				httpFace(t, session, fmt.Sprintf("%s http legacy at replica %d", name, i), false, ""),
				httpFace(t, newRawHost(t, m), fmt.Sprintf("%s http 2026-07-28 at replica %d", name, i), true, "matrix"),
			})
		}
		return fs
	}
	alice, bob := faces("alice"), faces("bob")
	bobs := &matrixActor{name: "bob", owner: "bob", faces: bob[0]}

	done := matrixJob{id: bob[0][1].background(t, "demo__sleep_then", map[string]any{"seconds": 0, "text": "bob's secret"}), tool: "demo__sleep_then", text: "bob's secret", by: bobs}
	if text, isErr := bob[0][1].toolText(t, "mcpx_job", map[string]any{"job_id": done.id, "wait_seconds": 20}); isErr || text != done.text {
		t.Fatalf("bob reading his job at replica 0: isError %v %q", isErr, text)
	}
	running := matrixJob{id: bob[0][1].background(t, "demo__wait", map[string]any{"seconds": 600}), tool: "demo__wait", by: bobs}
	for _, f := range slices.Concat(alice...) {
		for _, j := range []matrixJob{done, running} {
			jobCell(t, f, j, foreignJob)
		}
		if !f.modern {
			if ids := taskIDs(t, f); slices.Contains(ids, done.id) || slices.Contains(ids, running.id) {
				t.Errorf("%s: tasks/list shows bob's jobs: %v", f.name, ids)
			}
		}
	}
	for _, f := range bob[1] {
		for _, j := range []matrixJob{done, running} {
			jobCell(t, f, j, "")
		}
		if !f.modern {
			if ids := taskIDs(t, f); !slices.Contains(ids, done.id) || !slices.Contains(ids, running.id) {
				t.Errorf("%s: tasks/list lacks bob's jobs: %v", f.name, ids)
			}
		}
	}
	m := bob[1][1].call(t, "tools/call", map[string]any{"name": "mcpx_job_cancel", "arguments": map[string]any{"job_id": running.id}})
	if m.Error != nil || jobOf(t, m.Result).Status != "cancelled" {
		t.Errorf("bob cancelling his running job at replica 1: %s, want it cancelled", m.Encode())
	}

	want := 0
	for i := range c.Replicas {
		for _, f := range alice[i] {
			toolCell(t, f, false, "secret")
		}
		for _, f := range bob[i] {
			want += toolCell(t, f, true, "secret")
		}
	}
	n := 0
	for _, e := range c.envs {
		n += executions(e, "secret", "echo")
	}
	if n != want {
		t.Errorf("secret's echo ran %d times on the replicas, want %d (bob's calls alone)", n, want)
	}
}
