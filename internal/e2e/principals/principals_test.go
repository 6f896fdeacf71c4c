package principals

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// principalsDaemon is a daemon with an HTTP listener, the demo server and
// one named "secret", and /v1 clients for the local user (its socket),
// alice (a named token whose host filter allows demo__* alone), bob (a
// named token, unfiltered) and the default token's holder.
type principalsDaemon struct {
	e                    *mcpxtest.Env
	cfg                  string
	local, alice, bob, d *harness.V1Client
	base                 string
}

func startPrincipals(t *testing.T) *principalsDaemon {
	t.Helper()
	return startPrincipalsWith(t)
}

// startPrincipalsWith is startPrincipals with more servers in the config.
func startPrincipalsWith(t *testing.T, more ...mcpxtest.Demo) *principalsDaemon {
	t.Helper()
	e := mcpxtest.NewEnv(t)
	cfg := writePrincipalsConfig(e, []string{"demo__*"}, more...)
	mint := func(name string) string {
		out, stderr, code := e.Run(30*time.Second, "token", "--name", name)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	tokA, tokB := mint("alice"), mint("bob")
	local, st := harness.StartV1Daemon(t, e, cfg)
	if st.HTTP == "" {
		t.Fatalf("the daemon has no HTTP listener: %+v", st)
	}
	def, err := os.ReadFile(st.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(st.HTTP, apitype.PathMCP)
	as := func(tok string) *harness.V1Client {
		c := &harness.V1Client{T: t, Http: &http.Client{}, Base: base, Token: tok}
		t.Cleanup(c.Http.CloseIdleConnections)
		return c
	}
	return &principalsDaemon{e: e, cfg: cfg, local: local, alice: as(tokA), bob: as(tokB), d: as(strings.TrimSpace(string(def))), base: base}
}

// writePrincipalsConfig writes the config of startPrincipals, alice's
// host filter being aliceTools, with more servers beside demo and secret.
func writePrincipalsConfig(e *mcpxtest.Env, aliceTools []string, more ...mcpxtest.Demo) string {
	return e.WriteConfig(map[string]any{
		"http":  map[string]any{"listen": "127.0.0.1:0"},
		"hosts": map[string]any{"alice": map[string]any{"tools": aliceTools}},
	}, append([]mcpxtest.Demo{{Name: "demo"}, {Name: "secret"}}, more...)...)
}

// TestPrincipalsJobs: a job is its principal's. Another token's holder
// can neither read, wait on, list nor cancel it (404, as for an unknown
// id, its arguments never in the answer); the local user, on the socket,
// reads and cancels every principal's.
func TestPrincipalsJobs(t *testing.T) {
	p := startPrincipals(t)
	var done, long, mine apitype.Job
	if code := p.bob.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__echo", Arguments: json.RawMessage(`{"pin":"bob-s3cret"}`)}, &done); code != http.StatusOK || done.ID == "" {
		t.Fatalf("bob's job: %d %+v", code, done)
	}
	if code := p.bob.Json(http.MethodGet, "/v1/jobs/"+done.ID+"?wait=20", nil, &done); code != http.StatusOK || done.Status != "completed" || !strings.Contains(string(done.Result), "bob-s3cret") {
		t.Fatalf("bob reading his job: %d %+v", code, done)
	}
	if code := p.bob.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":60,"steps":60}`)}, &long); code != http.StatusOK || long.Status != "running" {
		t.Fatalf("bob's long job: %d %+v", code, long)
	}
	if code := p.local.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__echo", Arguments: json.RawMessage(`{"pin":"local-s3cret"}`)}, &mine); code != http.StatusOK || mine.Principal != "local" {
		t.Fatalf("the local user's job: %d %+v", code, mine)
	}

	for _, who := range []struct {
		name string
		c    *harness.V1Client
	}{{"alice", p.alice}, {"the default token", p.d}} {
		for _, j := range []apitype.Job{done, long, mine} {
			for _, rq := range []struct{ method, path string }{
				{http.MethodGet, "/v1/jobs/" + j.ID},
				{http.MethodGet, "/v1/jobs/" + j.ID + "/wait"},
				{http.MethodPost, "/v1/jobs/" + j.ID + "/cancel"},
			} {
				code, body := who.c.Raw(rq.method, rq.path, nil)
				var apiErr apitype.Error
				// The id is random base32, which may spell "bob" itself.
				rest := strings.ReplaceAll(body, j.ID, "")
				if code != http.StatusNotFound || json.Unmarshal([]byte(body), &apiErr) != nil || !strings.Contains(apiErr.Error, "no job has this id") ||
					strings.Contains(rest, "s3cret") || strings.Contains(rest, "bob") {
					t.Errorf("%s: %s %s of another's job: %d %s, want 404 as for an unknown id", who.name, rq.method, rq.path, code, body)
				}
			}
		}
		var list apitype.Jobs
		if code := who.c.Json(http.MethodGet, apitype.PathV1Jobs, nil, &list); code != http.StatusOK || len(list.Jobs) != 0 {
			t.Errorf("%s listing jobs: %d %+v, want none (all are others')", who.name, code, list.Jobs)
		}
	}
	var j apitype.Job
	if code := p.bob.Json(http.MethodGet, "/v1/jobs/"+long.ID, nil, &j); code != http.StatusOK || j.Status != "running" {
		t.Errorf("bob's long job after the others tried to cancel it: %d %+v, want running", code, j)
	}
	var list apitype.Jobs
	if code := p.bob.Json(http.MethodGet, apitype.PathV1Jobs, nil, &list); code != http.StatusOK || len(list.Jobs) != 2 {
		t.Errorf("bob's list: %d %+v, want his two jobs", code, list.Jobs)
	}
	// The local user reads every principal's and cancels them.
	if code := p.local.Json(http.MethodGet, "/v1/jobs/"+done.ID, nil, &j); code != http.StatusOK || !strings.Contains(string(j.Result), "bob-s3cret") {
		t.Errorf("the local user reading bob's job: %d %+v", code, j)
	}
	if code := p.local.Json(http.MethodPost, "/v1/jobs/"+long.ID+"/cancel", apitype.CancelJob{Client: "e2e"}, &j); code != http.StatusOK || j.Status != "cancelled" {
		t.Errorf("the local user cancelling bob's job: %d %+v", code, j)
	}
	if code := p.local.Json(http.MethodGet, apitype.PathV1Jobs, nil, &list); code != http.StatusOK || len(list.Jobs) != 3 {
		t.Errorf("the local user's list: %d %+v, want every principal's three jobs", code, list.Jobs)
	}
}

// TestPrincipalsCalls: a call in flight is its principal's: another
// token's holder cannot cancel it (404) nor see it in /v1/status, which
// names no other principal; the local user sees and cancels it.
func TestPrincipalsCalls(t *testing.T) {
	p := startPrincipals(t)
	s := p.bob.Call(apitype.CallRequest{Tool: "demo__export", Arguments: json.RawMessage(`{"seconds":60,"steps":60}`), Client: "bob-host"})
	started := s.Next()
	if started.Type != "started" || started.CallID == 0 {
		t.Fatalf("bob's call: %+v", started)
	}
	up := harness.ExportRequest(p.e)
	for name, c := range map[string]*harness.V1Client{"alice": p.alice, "the default token": p.d} {
		code, body := c.Raw(http.MethodPost, apitype.PathV1Cancel, apitype.CancelCall{CallID: started.CallID, Reason: "pwned by " + name})
		if code != http.StatusNotFound || !strings.Contains(body, "no such call in flight") {
			t.Errorf("%s cancelling bob's call: %d %s, want 404", name, code, body)
		}
		code, body = c.Raw(http.MethodGet, apitype.PathV1Status, nil)
		var st apitype.Status
		if code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("%s's status: %d %s", name, code, body)
		}
		if len(st.Calls) != 0 || len(st.Jobs) != 0 || len(st.Connected) != 0 || st.Socket != "" || st.Config != "" || strings.Contains(body, "bob") || strings.Contains(body, "alice") {
			t.Errorf("%s's status: %s, want no other principal's calls, jobs, hosts or files", name, body)
		}
	}
	if ev := s.Next(); ev.Type != "progress" {
		t.Errorf("bob's call after the others tried to cancel it: %+v, want it going on", ev)
	}
	var st apitype.Status
	if code := p.bob.Json(http.MethodGet, apitype.PathV1Status, nil, &st); code != http.StatusOK || len(st.Calls) != 1 || st.Calls[0].ID != started.CallID {
		t.Errorf("bob's status: %d %+v, want his call", code, st.Calls)
	}
	if code := p.local.Json(http.MethodGet, apitype.PathV1Status, nil, &st); code != http.StatusOK || len(st.Calls) != 1 || st.Socket == "" {
		t.Errorf("the local user's status: %d %+v, want all of it", code, st)
	}
	if code := p.local.Json(http.MethodPost, apitype.PathV1Cancel, apitype.CancelCall{CallID: started.CallID, Reason: "user"}, nil); code != http.StatusNoContent {
		t.Errorf("the local user cancelling bob's call: %d, want 204", code)
	}
	harness.CheckCancel(t, harness.UpstreamCancel(p.e, "demo", up.ID), "interrupted by user")
	if final, _ := s.Final(); final.Type != "error" || final.Error.Kind != "user_interrupt" {
		t.Errorf("bob's call's end: %+v", final)
	}
}

// TestPrincipalsToolFilter: alice's host filter (demo__* alone) holds on
// /v1 as over MCP: /v1/tools lists no other tool, and /v1/call,
// /v1/jobs and /v1/exec (tools.* and mcpx.call) refuse secret__echo,
// which never reaches its server; bob, unfiltered, calls it. The
// metrics, which name every server and tool, are refused to named
// tokens and served to the default token's holder.
func TestPrincipalsToolFilter(t *testing.T) {
	p := startPrincipals(t)
	var tools apitype.Tools
	if code := p.alice.Json(http.MethodGet, apitype.PathV1Tools, nil, &tools); code != http.StatusOK || len(tools.Tools) == 0 {
		t.Fatalf("alice's tools: %d %+v", code, tools)
	}
	for _, tool := range tools.Tools {
		if tool.Server != "demo" {
			t.Errorf("alice's /v1/tools lists %s", tool.Name)
		}
	}
	secret := apitype.CallRequest{Tool: "secret__echo", Arguments: json.RawMessage(`{"x":1}`)}
	for _, path := range []string{apitype.PathV1Call, apitype.PathV1Jobs} {
		code, body := p.alice.Raw(http.MethodPost, path, secret)
		if code != http.StatusForbidden || !strings.Contains(body, `is not allowed for this host`) {
			t.Errorf("alice's POST %s of secret__echo: %d %s, want 403", path, code, body)
		}
	}
	for _, code := range []string{`return await tools.secret.echo({x: 1})`, `return await mcpx.call("secret__echo", {x: 1})`} {
		resp := p.alice.Do(context.Background(), http.MethodPost, apitype.PathV1Exec, apitype.ExecRequest{Code: code}, nil)
		s := &harness.CallStream{Resp: resp, Sc: bufio.NewScanner(resp.Body), T: t}
		t.Cleanup(func() { resp.Body.Close() })
		s.Next()
		final, _ := s.Final()
		if (final.Type == "result" && !final.IsError) || !strings.Contains(string(final.Result)+errorText(final), "not allowed") {
			t.Errorf("alice's script %q: %+v (result %s), want it refused", code, final, final.Result)
		}
	}
	s := p.alice.Call(apitype.CallRequest{Tool: "demo__echo", Arguments: json.RawMessage(`{"x":1}`)})
	s.Next()
	if final, _ := s.Final(); final.Type != "result" || final.IsError {
		t.Errorf("alice's demo__echo: %+v, want its result", final)
	}
	if n := harness.Executions(p.e, "secret", "echo"); n != 0 {
		t.Errorf("secret's echo ran %d times for alice", n)
	}
	s = p.bob.Call(secret)
	s.Next()
	if final, _ := s.Final(); final.Type != "result" || final.IsError {
		t.Errorf("bob's secret__echo: %+v, want its result", final)
	}

	for name, c := range map[string]*harness.V1Client{"alice": p.alice, "bob": p.bob} {
		if code, body := c.Raw(http.MethodGet, apitype.PathMetrics, nil); code != http.StatusForbidden {
			t.Errorf("%s's GET /metrics: %d %.200s, want 403", name, code, body)
		}
	}
	if code, body := p.d.Raw(http.MethodGet, apitype.PathMetrics, nil); code != http.StatusOK || !strings.Contains(body, "mcpx_calls_total") {
		t.Errorf("the default token's GET /metrics: %d %.200s", code, body)
	}

	// A job is read only while its tool is allowed: once a reload takes
	// demo__echo from alice, her echo job is a 403 and leaves her list.
	var j apitype.Job
	if code := p.alice.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__echo", Arguments: json.RawMessage(`{"x":2}`)}, &j); code != http.StatusOK {
		t.Fatalf("alice's echo job: %d %+v", code, j)
	}
	if code := p.alice.Json(http.MethodGet, "/v1/jobs/"+j.ID+"?wait=20", nil, &j); code != http.StatusOK || j.Status != "completed" {
		t.Fatalf("alice reading her echo job: %d %+v", code, j)
	}
	writePrincipalsConfig(p.e, []string{"demo__export"})
	if out, stderr, code := p.e.Run(harness.WaitLong, "reload", "--config", p.cfg); code != 0 {
		t.Fatalf("mcpx reload: exit %d %s %s", code, out, stderr)
	}
	if code, body := p.alice.Raw(http.MethodGet, "/v1/jobs/"+j.ID, nil); code != http.StatusForbidden || !strings.Contains(body, "not allowed for this host") {
		t.Errorf("alice reading her echo job after the reload: %d %s, want 403", code, body)
	}
	var list apitype.Jobs
	if code := p.alice.Json(http.MethodGet, apitype.PathV1Jobs, nil, &list); code != http.StatusOK || len(list.Jobs) != 0 {
		t.Errorf("alice's list after the reload: %d %+v, want none", code, list.Jobs)
	}

	// A script's job keeps the filter it ran under: alice, filtered,
	// reads and lists her own, as her hosts over MCP do (a script job
	// kept no filter, or another, is hidden from a filtered reader).
	if code := p.alice.Json(http.MethodPost, apitype.PathV1Exec, apitype.ExecRequest{Code: `return 7`, Background: true}, &j); code != http.StatusOK {
		t.Fatalf("alice's script job: %d %+v", code, j)
	}
	if code, body := p.alice.Raw(http.MethodGet, "/v1/jobs/"+j.ID+"?wait=20", nil); code != http.StatusOK || !strings.Contains(body, `"completed"`) {
		t.Errorf("alice reading her script job: %d %s, want it completed", code, body)
	}
	if code := p.alice.Json(http.MethodGet, apitype.PathV1Jobs, nil, &list); code != http.StatusOK || len(list.Jobs) != 1 || list.Jobs[0].ID != j.ID {
		t.Errorf("alice's list with her script job: %d %+v, want it alone", code, list.Jobs)
	}
	if code, body := p.bob.Raw(http.MethodGet, "/v1/jobs/"+j.ID, nil); code != http.StatusNotFound {
		t.Errorf("bob reading alice's script job: %d %s, want 404", code, body)
	}
}

func errorText(ev apitype.CallEvent) string {
	if ev.Error == nil {
		return ""
	}
	return ev.Error.Message
}

// TestReplicasPrincipals: a named token is the same principal on every
// replica sharing the store: alice's job, started on one replica, is
// hers on the other; to bob and to the default token's holder it is
// refused on both, its arguments never in the answer.
func TestReplicasPrincipals(t *testing.T) {
	c := harness.StartCluster(t, "5s")
	op := mcpxtest.NewEnv(t)
	cfg := op.WriteConfig(map[string]any{"store": c.PG}, mcpxtest.Demo{Name: "demo"})
	mint := func(name string) string {
		out, stderr, code := op.Run(30*time.Second, "token", "--name", name, "--config", cfg)
		if code != 0 {
			t.Fatalf("mcpx token --name %s: exit %d %s", name, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	alice, bob := mint("alice"), mint("bob")
	hc := &http.Client{}
	t.Cleanup(hc.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	call := func(url, tok, name string, args map[string]any) string {
		t.Helper()
		body, hdr := harness.ModernRequest(1, "tools/call", name, map[string]any{"name": name, "arguments": args})
		m, err := harness.PostMCP(ctx, hc, url, tok, body, hdr)
		if err != nil {
			t.Fatalf("%s at %s: %v", name, url, err)
		}
		return string(m.Encode())
	}
	r0, r1 := c.Replicas[0].URL, c.Replicas[1].URL
	var started struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(call(r0, alice, "mcpx_call", map[string]any{"background": true, "name": "demo__echo", "arguments": map[string]any{"pin": "alice-s3cret"}})), &started); err != nil {
		t.Fatal(err)
	}
	job := harness.JobOf(t, started.Result).JobID
	if got := call(r1, alice, "mcpx_job", map[string]any{"job_id": job, "wait_seconds": 20}); !strings.Contains(got, "alice-s3cret") {
		t.Errorf("alice reading her job on the other replica: %s", got)
	}
	for _, who := range []struct{ name, tok string }{{"bob", bob}, {"the default token", c.Token}} {
		for _, url := range []string{r0, r1} {
			for _, tool := range []string{"mcpx_job", "mcpx_job_cancel"} {
				if got := call(url, who.tok, tool, map[string]any{"job_id": job}); strings.Contains(got, "alice-s3cret") || !strings.Contains(got, `"isError":true`) {
					t.Errorf("%s's %s of alice's job at %s: %s, want refused", who.name, tool, url, got)
				}
			}
		}
	}
}
