package team

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestOIDCBackground: a group whose policy says background: false may
// call its tools but start no job, on every path that starts one: POST
// /v1/jobs is a 403, mcpx_call's background a tool error, a 2025-11-25
// task a JSON-RPC error; a /v1 call past its JobAfterMs stays a plain
// call to its end. A person of a group that may start jobs gets each of
// them.
func TestOIDCBackground(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	users, _ := json.Marshal(oidcPeople)
	usersFile := e.Path("oidc-users.json")
	if err := os.WriteFile(usersFile, users, 0o600); err != nil {
		t.Fatal(err)
	}
	op := mcpxtest.StartOIDCEnv(t, oidcRedirect, "USERS_FILE="+usersFile)
	port := mcpxtest.FreePort(t)
	base := "http://127.0.0.1:" + port
	var md map[string]any
	getJSONInto(t, op.Issuer+".well-known/openid-configuration", &md)
	cfg := e.WriteConfig(map[string]any{
		"http": map[string]any{"listen": "127.0.0.1:" + port},
		"auth": map[string]any{
			"issuers": []string{op.Issuer}, "audience": base + apitype.PathMCP, "groupsClaim": "family_name",
			"introspection": map[string]any{"url": md["introspection_endpoint"], "clientId": "web", "clientSecret": "secret"},
			"groups": map[string]any{
				"alpha": map[string]any{"tools": []string{"demo__sleep_then"}},
				"beta":  map[string]any{"tools": []string{"demo__sleep_then"}, "background": false},
			},
		},
	}, mcpxtest.Demo{Name: "demo"})
	harness.StartV1Daemon(t, e, cfg)
	g := &oidcGateway{e: e, base: base, resource: base + apitype.PathMCP}
	alice, bob := personToken(t, op, "alice", "openid profile"), personToken(t, op, "bob", "openid profile")
	av, bv := g.v1(t, alice), g.v1(t, bob)
	am, bm := g.mcp(t, alice), g.mcp(t, bob)
	sleep := func(text string, seconds float64) map[string]any {
		return map[string]any{"seconds": seconds, "text": text}
	}
	raw := func(v map[string]any) json.RawMessage { b, _ := json.Marshal(v); return b }

	// POST /v1/jobs.
	var apiErr apitype.Error
	if code := bv.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__sleep_then", Arguments: raw(sleep("bob's", 0))}, &apiErr); code != http.StatusForbidden || !strings.Contains(apiErr.Error, "background") {
		t.Errorf("bob starts a job over /v1: %d %+v, want 403 naming background", code, apiErr)
	}
	var job apitype.Job
	if code := av.Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "demo__sleep_then", Arguments: raw(sleep("alice's", 0))}, &job); code != http.StatusOK || job.ID == "" {
		t.Errorf("alice starts a job over /v1: %d %+v", code, job)
	}
	// Bob may still call the tool.
	if res, msg := toolCall(t, bm, "demo__sleep_then", sleep("bob calls", 0)); msg != "" || !strings.Contains(res, "bob calls") || strings.Contains(res, `"isError":true`) {
		t.Errorf("bob calls demo__sleep_then: %s %s", res, msg)
	}
	// mcpx_call in the background: a tool error for bob, a job for alice.
	bg := map[string]any{"name": "demo__sleep_then", "arguments": sleep("bg", 0), "background": true}
	if res, msg := toolCall(t, bm, "mcpx_call", bg); msg != "" || !strings.Contains(res, `"isError":true`) || !strings.Contains(res, "background") {
		t.Errorf("bob's mcpx_call in the background: %s %s, want a tool error naming background", res, msg)
	}
	if res, msg := toolCall(t, am, "mcpx_call", bg); msg != "" || !strings.Contains(res, "job_id") {
		t.Errorf("alice's mcpx_call in the background: %s %s, want a job", res, msg)
	}
	// A 2025-11-25 task: a JSON-RPC error for bob, a task for alice.
	task := func(h *harness.RawHost) *harness.HttpReply {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "t", "method": "tools/call", "params": map[string]any{
			"name": "demo__sleep_then", "arguments": sleep("task", 0), "task": map[string]any{}}})
		return h.Do(string(b), map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	}
	if r := task(bm); r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error == nil || !strings.Contains(r.Msgs[len(r.Msgs)-1].Error.Message, "background") {
		t.Errorf("bob's task: %d %s, want a JSON-RPC error naming background", r.Status, r.Body)
	}
	if r := task(am); r.Status != http.StatusOK || len(r.Msgs) == 0 || !strings.Contains(string(r.Msgs[len(r.Msgs)-1].Result), "taskId") {
		t.Errorf("alice's task: %d %s, want a task", r.Status, r.Body)
	}
	// A /v1 call past its JobAfterMs: a job of alice's; bob's runs on as
	// a plain call to its result.
	for _, tc := range []struct {
		who  string
		c    *harness.V1Client
		want string
	}{{"alice", av, "job"}, {"bob", bv, "result"}} {
		s := tc.c.Call(apitype.CallRequest{Tool: "demo__sleep_then", Arguments: raw(sleep(tc.who+" past", 1)), JobAfterMs: 200})
		var last apitype.CallEvent
		for last = s.Next(); last.Type == "started" || last.Type == "progress"; last = s.Next() {
		}
		if last.Type != tc.want {
			t.Errorf("%s's call past JobAfterMs ends with %+v, want %q", tc.who, last, tc.want)
		}
	}
}
