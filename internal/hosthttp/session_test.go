package hosthttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/principal"
)

// TestPersonSessionGroups: a person's legacy session is theirs with the
// groups it began with; the same person with other groups (a new token
// after they left a group) finds no session, and so no policy of the
// groups they no longer have.
func TestPersonSessionGroups(t *testing.T) {
	face, stop := newTestServer()
	defer stop()
	a := principal.Person("https://idp.example.com/", "u1", "Ada", []string{"eng", "ops"})
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	face.serve(w, r, a)
	sid := w.Header().Get(HeaderSessionID)
	if w.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	if face.session(a, sid) == nil {
		t.Error("the person with the same groups finds no session")
	}
	if face.session(principal.Person("https://idp.example.com/", "u1", "Ada", []string{"eng"}), sid) != nil {
		t.Error("the person with other groups finds the session begun with the old ones")
	}
	if face.session(principal.Person("https://idp.example.com/", "u2", "Bo", []string{"eng", "ops"}), sid) != nil {
		t.Error("another person finds the session")
	}
}
