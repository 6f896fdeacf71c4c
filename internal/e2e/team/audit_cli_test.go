package team

import (
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

// TestCLIChangesAudited: the changes the CLI makes with no daemon (mcpx
// login and logout of a shared sign-in at a real OpenID provider, mcpx
// token's mint and revoke) each leave exactly their line in the audit
// file and in the store's table, which mcpx audit then reads through the
// daemon; with the audit file on a full device, failing closed, the
// sign-in is not kept, and logout neither revokes nor forgets it.
func TestCLIChangesAudited(t *testing.T) {
	e := mcpxtest.NewEnv(t)
	redirect := "http://127.0.0.1:" + mcpxtest.FreePort(t) + "/callback"
	op := mcpxtest.StartOIDC(t, redirect)
	ps := harness.StartProtected(t, op.Issuer)
	servers := map[string]any{"secure": map[string]any{
		"url": ps.URL + "/mcp", "oauth": map[string]any{"clientId": mcpxtest.OIDCClient, "redirectUri": redirect},
	}}
	file := e.Path("audit.jsonl")
	cfg, full := e.Path("config.json"), e.Path("full.json")
	harness.WriteJSONFile(t, cfg, map[string]any{"mcpServers": servers, "mcpx": map[string]any{"audit": map[string]any{"file": file}}})
	harness.WriteJSONFile(t, full, map[string]any{"mcpServers": servers, "mcpx": map[string]any{"audit": map[string]any{"file": "/dev/full", "store": false}}})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		out, errb, code := e.Run(60*time.Second, args...)
		if code != want {
			t.Fatalf("mcpx %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errb)
		}
		return out, errb
	}

	// Failing closed: a login is refused before the browser step, and
	// keeps nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	login := e.Command(ctx, "login", "--config", full, "secure")
	// A browser that only notes it was opened: refused at once, the
	// login never opens it; refused after the browser step, it would
	// wait for a redirect that never comes.
	opened := e.Path("browser-opened")
	browser := e.Path("browser.sh")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho opened >> "+opened+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	login.Env = append(login.Env, "BROWSER="+browser)
	out, err := login.CombinedOutput()
	const refused = `refused: the audit log cannot be written (writing the audit log to /dev/full: write /dev/full: no space left on device); mcpx.audit.onFailure is "closed", so nothing was changed`
	if err == nil || !strings.Contains(string(out), refused) {
		t.Fatalf("mcpx login with the audit log on a full device: %v\n%s", err, out)
	}
	if _, err := os.Stat(harness.SignInPath(e)); !os.IsNotExist(err) {
		t.Fatalf("the refused sign-in was kept: %v", err)
	}
	if _, err := os.Stat(opened); !os.IsNotExist(err) {
		t.Fatalf("the refused sign-in opened the browser first: %v", err)
	}

	harness.McpxLogin(t, e, cfg, exe, e.Path("prompts.log"))
	access := harness.ReadSignIn(t, e).Token.AccessToken
	// Failing closed: logout neither revokes nor forgets the sign-in.
	if _, errb := run(apitype.ExitTransport, "logout", "--config", full, "secure"); !strings.Contains(errb, refused) {
		t.Fatalf("mcpx logout with the audit log on a full device said %q", errb)
	}
	if harness.ReadSignIn(t, e).Token.AccessToken != access || harness.Userinfo(t, op.Issuer, access) != http.StatusOK {
		t.Fatal("the refused logout changed the sign-in")
	}
	run(0, "logout", "--config", cfg, "secure")
	if harness.Userinfo(t, op.Issuer, access) == http.StatusOK {
		t.Fatal("logout did not revoke the token")
	}
	run(0, "token", "--name", "ci", "--config", cfg)
	run(0, "token", "--name", "ci", "--config", cfg) // printed again: no change
	run(0, "token", "--revoke", "ci", "--config", cfg)

	want := []string{
		"signin mcpx login secure ok",
		"signout mcpx logout secure ok",
		"token mint  ok",
		"token revoke  ok",
	}
	var lines []string
	for _, r := range readAuditFile(t, file) {
		if r.Principal != "local" || r.Face != "cli" || r.Name == "" {
			t.Errorf("record %+v: want principal local, face cli and a name", r)
		}
		lines = append(lines, strings.Join([]string{string(r.Kind), r.Action, r.Server, r.Outcome}, " "))
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the audit file:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	run(0, "daemon", "--background", "--config", cfg)
	var table apitype.AuditRecords
	if out, _ := run(0, "audit", "--json", "--config", cfg); json.Unmarshal([]byte(out), &table) != nil {
		t.Fatalf("mcpx audit --json: %s", out)
	}
	lines = nil
	for i := len(table.Records) - 1; i >= 0; i-- { // newest first
		r := table.Records[i]
		lines = append(lines, strings.Join([]string{r.Kind, r.Action, r.Server, r.Outcome}, " "))
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mcpx audit:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
