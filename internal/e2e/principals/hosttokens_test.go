package principals

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestNamedHostTokens: two HTTP hosts holding tokens of their own (`mcpx
// token --name`) are two principals. A requestState mcpx sealed for one
// (a 2026-07-28 host calling the demo's ask tool on a legacy upstream) is
// refused (-32602) from the other, and from a host with the default
// token, and resumes the call for its own host. A legacy session answers
// only its own host: another token with its Mcp-Session-Id gets 404. The
// logs name the principal, never the token. A revoked token is refused
// (401) from the next request on, while the other still works; minted
// again under the same name it is another principal, to whom the old
// holder's state does not belong.
func TestNamedHostTokens(t *testing.T) {
	t.Parallel()
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, harness.LegacyDemo)
		mint := func(name string) string {
			out, stderr, code := e.Run(30*time.Second, "token", "--name", name)
			tok := strings.TrimSpace(out)
			if code != 0 || len(tok) != 43 {
				t.Fatalf("mcpx token --name %s: exit %d, %q %s", name, code, tok, stderr)
			}
			return tok
		}
		tokA, tokB := mint("alice"), mint("bob")
		m := harness.StartHTTP(t, e, mode, cfg, false)
		as := func(tok string) *harness.RawHost {
			return harness.NewRawHost(t, &harness.HTTPMCPX{URL: m.URL, Token: tok, LogBuf: m.LogBuf})
		}
		alice, bob, shared := as(tokA), as(tokB), as(m.Token)

		ask := func(h *harness.RawHost, id, extra string) *jsonrpc.Message {
			return harness.AskOverHTTP(t, h, id, extra)
		}
		_, state := harness.InputRequiredOf(t, ask(alice, "a1", ""))
		retry := `,"inputResponses":{"mcpx-1":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + state + `"`
		for who, h := range map[string]*harness.RawHost{"bob": bob, "the default token's host": shared} {
			if m := ask(h, "b1", retry); m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "another host") {
				t.Errorf("%s presenting alice's state: %s, want -32602", who, m.Encode())
			}
		}
		if m := ask(alice, "a2", retry); m.Error != nil || !strings.Contains(string(m.Result), `"answers":[{"result":{"action":"accept","content":{"name":"Ada"}}}]`) {
			t.Errorf("alice presenting her state: %s, want the upstream's result with her answer", m.Encode())
		}
		m.WaitLog(t, harness.WaitLong, "refused a requestState issued to another host", "issuedTo=http:alice", "presentedBy=http:bob")

		// A legacy session is its starter's alone.
		alice.Initialize("2025-11-25")
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		if r := alice.Do(list, nil); r.Status != http.StatusOK || len(r.Msgs) != 1 || r.Msgs[0].Error != nil {
			t.Fatalf("alice's tools/list in her session: %d %.200s", r.Status, r.Body)
		}
		for _, h := range []*harness.RawHost{bob, shared} {
			h.Sid = alice.Sid
			if r := h.Do(list, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}); r.Status != http.StatusNotFound {
				t.Errorf("tools/list in alice's session with another token: %d %.200s, want 404", r.Status, r.Body)
			}
			if r := h.Do(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, nil); r.Status != http.StatusNotFound {
				t.Errorf("a notification in alice's session with another token: %d, want 404", r.Status)
			}
			h.Sid = ""
		}
		if r := alice.Do(list, nil); r.Status != http.StatusOK {
			t.Errorf("alice's session after the others tried it: %d %.200s", r.Status, r.Body)
		}
		m.WaitLog(t, harness.WaitLong, "http session started", "principal=http:alice")

		// Revoking bob shuts bob out, at once, and no one else.
		_, bobState := harness.InputRequiredOf(t, ask(bob, "b2", ""))
		if out, stderr, code := e.Run(30*time.Second, "token", "--revoke", "bob"); code != 0 {
			t.Fatalf("mcpx token --revoke bob: exit %d %s %s", code, out, stderr)
		}
		discover := harness.ModernHeaders("server/discover", "")
		if r := bob.Do(harness.ModernDiscover, discover); r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("bob after his token was revoked: %d %v, want 401 invalid_token", r.Status, r.Header)
		}
		for who, h := range map[string]*harness.RawHost{"alice": alice, "the default token's host": shared} {
			if r := h.Do(harness.ModernDiscover, discover); r.Status != http.StatusOK {
				t.Errorf("%s after bob's revocation: %d %s", who, r.Status, r.Body)
			}
		}
		m.WaitLog(t, harness.WaitLong, "http request refused", "status=401")

		// bob minted again is another principal: the old bob's state is
		// not his.
		newBob := as(mint("bob"))
		bobRetry := `,"inputResponses":{"mcpx-1":{"action":"accept","content":{"name":"Bo"}}},"requestState":"` + bobState + `"`
		if m := ask(newBob, "b3", bobRetry); m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "another host") {
			t.Errorf("a new token named bob presenting the old bob's state: %s, want -32602", m.Encode())
		}

		for _, tok := range []string{tokA, tokB, m.Token} {
			if strings.Contains(m.Logs(), tok) {
				t.Errorf("mcpx logged a token")
			}
		}
	})
}
