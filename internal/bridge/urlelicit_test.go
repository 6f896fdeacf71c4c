package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/upstream"
)

// TestURLElicitations: which upstream errors are a -32042 mcpx turns into
// input_required, which are one it cannot relay, and which are none.
func TestURLElicitations(t *testing.T) {
	el := `{"mode":"url","elicitationId":"e1","url":"https://x.test/?a=1&b=2","message":"Sign in"}`
	rpc := func(code int64, data string) error {
		return fmt.Errorf("calling: %w", &jsonrpc.Error{Code: code, Message: "m", Data: json.RawMessage(data)})
	}
	tests := []struct {
		name    string
		err     error
		ok      bool
		bad     string // part of the reason it cannot be relayed
		relayed string // the first elicitation, if relayed
	}{
		{"not an error", nil, false, "", ""},
		{"another code", rpc(-32602, `{"elicitations":[`+el+`]}`), false, "", ""},
		{"not from the upstream", &upstream.StartError{Server: "s", Err: &jsonrpc.Error{Code: -32042}}, false, "", ""},
		{"a local error", errors.New("boom"), false, "", ""},
		{"one", rpc(-32042, `{"elicitations":[`+el+`]}`), true, "", el},
		{"no data", rpc(-32042, ``), true, "lists no elicitations", ""},
		{"empty list", rpc(-32042, `{"elicitations":[]}`), true, "lists no elicitations", ""},
		{"form mode", rpc(-32042, `{"elicitations":[{"mode":"form","message":"m","requestedSchema":{}}]}`), true, "not a URL-mode", ""},
		{"no url", rpc(-32042, `{"elicitations":[{"mode":"url","message":"m"}]}`), true, "not a URL-mode", ""},
		{"no message", rpc(-32042, `{"elicitations":[{"mode":"url","url":"https://x.test"}]}`), true, "not a URL-mode", ""},
		{"not an object", rpc(-32042, `{"elicitations":["https://x.test"]}`), true, "not an object", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			els, ok, bad := urlElicitations(tt.err)
			if ok != tt.ok || (bad == nil) != (tt.bad == "") || bad != nil && !strings.Contains(bad.Error(), tt.bad) {
				t.Fatalf("ok %v, bad %v; want ok %v, bad %q", ok, bad, tt.ok, tt.bad)
			}
			if tt.relayed != "" && (len(els) != 1 || string(els[0].Bytes()) != tt.relayed) {
				t.Errorf("elicitations %v, want %s as it was", els, tt.relayed)
			}
		})
	}
}

// TestElicitationIDAcrossEras: a URL-mode elicitation gets an
// elicitationId of mcpx's for a legacy host when it has none, and loses
// its own for a 2026-07-28 host; nothing else changes.
func TestElicitationIDAcrossEras(t *testing.T) {
	const create = mcp.MethodElicitationCreate
	with := withElicitationID(create, json.RawMessage(`{"mode":"url","url":"https://x.test/?a&b","message":"m"}`))
	if !strings.HasPrefix(string(with), `{"mode":"url","url":"https://x.test/?a&b","message":"m","elicitationId":"mcpx-elicitation-`) {
		t.Errorf("for a legacy host: %s", with)
	}
	for _, p := range []string{`{"mode":"url","elicitationId":"up-1","url":"u","message":"m"}`, `{"mode":"form","message":"m"}`, `{"message":"m"}`} {
		if got := withElicitationID(create, json.RawMessage(p)); string(got) != p {
			t.Errorf("for a legacy host, %s became %s", p, got)
		}
	}
	if got := withoutElicitationID(create, json.RawMessage(`{"mode":"url","elicitationId":"up-1","url":"https://x.test/?a&b","message":"m"}`)); string(got) != `{"mode":"url","url":"https://x.test/?a&b","message":"m"}` {
		t.Errorf("for a 2026-07-28 host: %s", got)
	}
	for _, p := range []string{`{"mode":"form","elicitationId":"x","message":"m"}`, `{"mode":"url","url":"u","message":"m"}`} {
		if got := withoutElicitationID(create, json.RawMessage(p)); string(got) != p {
			t.Errorf("for a 2026-07-28 host, %s became %s", p, got)
		}
	}
	if got := withoutElicitationID("sampling/createMessage", json.RawMessage(`{"mode":"url","elicitationId":"x"}`)); string(got) != `{"mode":"url","elicitationId":"x"}` {
		t.Errorf("another method changed: %s", got)
	}
}
