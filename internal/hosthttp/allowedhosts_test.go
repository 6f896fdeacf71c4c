package hosthttp

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/principal"
)

// A replica behind a load balancer answers for the names it is given,
// beside its own address; every other name is still refused.
func TestAllowedHosts(t *testing.T) {
	a := Access{Addr: "127.0.0.1:7001", AllowedHosts: []string{"gateway.example.com", "127.0.0.1:8443", "[::1]", "lb:9000"}}
	for host, want := range map[string]bool{
		"gateway.example.com":      true,
		"GATEWAY.example.com:443":  true,
		"127.0.0.1:8443":           true,
		"127.0.0.1:7001":           true, // its own address
		"[::1]:5":                  true,
		"lb:9000":                  true,
		"lb:9001":                  false,
		"lb":                       false,
		"evil.example.com":         false,
		"gateway.example.com.evil": false,
		"127.0.0.1:8444":           false,
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = host
		v := a.Decide(r)
		status, msg := v.Status, v.Msg
		if got := status == 0; got != want {
			t.Errorf("Host %q: status %d %q, want allowed=%v", host, status, msg, want)
		}
	}
}

// checkingTokens cannot tell for tokens it has no answer for.
type checkingTokens struct{ testTokens }

func (c checkingTokens) Check(tok string) (string, bool, error) {
	if name, ok := c.testTokens[tok]; ok {
		return name, true, nil
	}
	if tok == "unknown-while-down" {
		return "", false, errors.New("the job store (PostgreSQL at db:5432/mcpx) is unavailable")
	}
	return "", false, nil
}

// Tokens that cannot be checked (a shared store down) answer 503 saying
// so, never 401: the token may be good. Those they can check go as usual.
func TestAccessCheckUnavailable(t *testing.T) {
	a := Access{Addr: "127.0.0.1:7001", Tokens: checkingTokens{testTokens{"alice-token": "alice"}}}
	for tok, want := range map[string]int{"alice-token": 0, "wrong": 401, "unknown-while-down": 503} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = "127.0.0.1:7001"
		r.Header.Set("Authorization", "Bearer "+tok)
		v := a.Decide(r)
		status, msg, who := v.Status, v.Msg, v.Who
		if status != want || strings.Contains(msg, tok) {
			t.Errorf("token %q: %d %q, want %d (never quoting the token)", tok, status, msg, want)
		}
		if want == 503 && !strings.Contains(msg, "unavailable") {
			t.Errorf("503 %q does not say why", msg)
		}
		if want == 0 && who.ID() != principal.NamedToken("alice", tok).ID() {
			t.Errorf("principal %q", who.ID())
		}
	}
}
