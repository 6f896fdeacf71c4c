package team

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// mcpxLogin runs `mcpx login SERVER` as the guide's step 3 does, the
// test binary its headless browser (signing in as the service account).
func mcpxLogin(t *testing.T, e *mcpxtest.Env, cfg, exe, server string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.WaitLong)
	defer cancel()
	cmd := e.Command(ctx, "login", "--config", cfg, server)
	cmd.Env = append(cmd.Env, "BROWSER="+exe+" -test.run=NONE", harness.OauthBrowserEnv+"="+filepath.Join(e.Dir, "prompts.log"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpx login %s: %v\n%s", server, err, out)
	}
}

// teamGuideFlow is what a team does once the guide's gateway runs.
func teamGuideFlow(t *testing.T, op *mcpxtest.OIDC, tracker *personUpstream, envs []*mcpxtest.Env, cfgs []string, endpoint string, addrs []string) {
	alice, bob := personToken(t, op, "alice", "openid profile"), personToken(t, op, "bob", "openid profile")
	lbHost := strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), apitype.PathMCP)

	// alice, through nginx, is asked to sign in to the tracker; the link
	// is on the public URL, and her browser goes through nginx too.
	aliceLB := connectThrough(t, endpoint, alice, http.DefaultTransport)
	link := signInLinkOf(t, aliceLB, "alice")
	if !strings.HasPrefix(link, "http://"+lbHost+"/oauth/start?s=") {
		t.Fatalf("alice's sign-in link %q is not on the public URL", link)
	}
	if err := signInWith(link, "alice", guidePeople["alice"].Password); err != nil {
		t.Fatalf("alice signing in to the tracker: %v", err)
	}
	// She calls it through nginx and through each replica, as herself.
	var aliceToken string
	for i, next := range []http.RoundTripper{http.DefaultTransport, via{addrs[0]}, via{addrs[1]}} {
		cs := aliceLB
		if i > 0 {
			cs = connectThrough(t, endpoint, alice, next)
		}
		if text, err := callTracker(cs, "whoami", map[string]any{}); err != nil || text != "you are alice" {
			t.Fatalf("alice's whoami, way %d: %q, %v", i, text, err)
		}
		c := tracker.last(t)
		if aliceToken == "" {
			aliceToken = c.Token
		}
		if c.Token != aliceToken || !strings.HasPrefix(c.Identity, "person:") || !strings.HasSuffix(c.Identity, "#alice") {
			t.Fatalf("alice's whoami, way %d, reached the tracker with another token or identity %q", i, c.Identity)
		}
	}
	if text, err := callTracker(aliceLB, "close_issue", map[string]any{"id": "7"}); err != nil || text != "alice closed 7" {
		t.Fatalf("alice closes an issue: %q, %v", text, err)
	}
	// A job started on replica 0 is read on replica 1.
	v1 := func(tok, addr string) *harness.V1Client {
		c := &harness.V1Client{T: t, Http: &http.Client{Transport: via{addr}}, Base: "http://" + lbHost, Token: tok}
		t.Cleanup(c.Http.CloseIdleConnections)
		return c
	}
	var job apitype.Job
	if code := v1(alice, addrs[0]).Json(http.MethodPost, apitype.PathV1Jobs, apitype.CallRequest{Tool: "tracker__whoami", Arguments: json.RawMessage(`{}`)}, &job); code != http.StatusOK || job.ID == "" {
		t.Fatalf("alice starts a job on replica 0: %d %+v", code, job)
	}
	jobPath := strings.Replace(apitype.PathV1Job, "{id}", job.ID, 1)
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(20 * time.Millisecond) {
		var got apitype.Job
		if code := v1(alice, addrs[1]).Json(http.MethodGet, jobPath, nil, &got); code != http.StatusOK {
			t.Fatalf("alice reads her job on replica 1: %d", code)
		}
		if got.Status == "completed" && strings.Contains(string(got.Result), "you are alice") {
			break
		}
		if got.Status != "running" || time.Now().After(deadline) {
			t.Fatalf("alice's job, read on replica 1: %+v", got)
		}
	}

	// bob (support) may not close issues, cannot read alice's job, and
	// signs in to the tracker as himself.
	bobLB := connectThrough(t, endpoint, bob, http.DefaultTransport)
	if text, err := callTracker(bobLB, "close_issue", map[string]any{"id": "7"}); err == nil || strings.Contains(text, "closed") {
		t.Fatalf("bob closes an issue: %q, %v; want refused", text, err)
	}
	var apiErr apitype.Error
	if code := v1(bob, addrs[1]).Json(http.MethodGet, jobPath, nil, &apiErr); code != http.StatusNotFound {
		t.Fatalf("bob reads alice's job: %d %+v, want 404", code, apiErr)
	}
	link = signInLinkOf(t, bobLB, "bob")
	if err := signInWith(link, "bob", guidePeople["bob"].Password); err != nil {
		t.Fatalf("bob signing in to the tracker: %v", err)
	}
	if text, err := callTracker(bobLB, "whoami", map[string]any{}); err != nil || text != "you are bob" {
		t.Fatalf("bob's whoami: %q, %v", text, err)
	}
	if c := tracker.last(t); c.Token == aliceToken || !strings.HasSuffix(c.Identity, "#bob") {
		t.Fatalf("bob's whoami reached the tracker with alice's token, or as %q", c.Identity)
	}

	guideAudit(t, envs[1], cfgs[1], job.ID)
}

// guideAudit checks the store's audit table, read by `mcpx audit --json`
// on replica 1's socket, holds exactly the lines of what the people did.
func guideAudit(t *testing.T, e *mcpxtest.Env, cfg, job string) {
	t.Helper()
	want := []string{
		"signin  []  ok",                       // the service account's mcpx login, recorded by the CLI
		"call alice [developers] whoami error", // the call that asked her to sign in
		"signin alice []  ok",                  // the sign-in's start page
		"signin alice []  ok",                  // and its callback
		"call alice [developers] whoami ok",
		"call alice [developers] whoami ok",
		"call alice [developers] whoami ok",
		"call alice [developers] close_issue ok",
		"job.start alice [developers] whoami running job",
		"call alice [developers] whoami ok job",
		"job.end alice [developers] whoami completed job",
		"refusal bob [support] close_issue refused",
		"call bob [support] whoami error",
		"signin bob []  ok",
		"signin bob []  ok",
		"call bob [support] whoami ok",
	}
	var got []string
	replicas := map[string]bool{}
	for deadline := time.Now().Add(harness.WaitLong); ; time.Sleep(50 * time.Millisecond) {
		out, errOut, code := e.Run(harness.WaitLong, "audit", "--json", "--limit", "1000", "--config", cfg)
		if code != 0 {
			t.Fatalf("mcpx audit --json: exit %d %s", code, errOut)
		}
		var recs apitype.AuditRecords
		if err := json.Unmarshal([]byte(out), &recs); err != nil {
			t.Fatalf("mcpx audit --json: %v\n%s", err, out)
		}
		got = got[:0]
		for i := len(recs.Records) - 1; i >= 0; i-- { // newest first
			r := recs.Records[i]
			_, who, _ := strings.Cut(r.Principal, "#")
			l := fmt.Sprintf("%s %s %v %s %s", r.Kind, who, r.Groups, r.Tool, r.Outcome)
			if r.Job != "" {
				if r.Job != job {
					t.Errorf("a record names job %s, not alice's %s", r.Job, job)
				}
				l += " job"
			}
			if r.Kind == "call" && who == "alice" && r.Tool == "whoami" && r.Job == "" {
				replicas[r.Replica] = true
			}
			got = append(got, l)
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mcpx audit --json on replica 1 has\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(replicas) != 2 {
		t.Errorf("alice's calls are recorded on replicas %v, want both", replicas)
	}
}
