package hosthttp

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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

// TestSessionsEndedInOrder: what the transport asks of the sessions as
// they end, in the order the package doc says: a DELETE ends its session
// (End), waits for its handlers (Close) and gives up what it asked for
// (Leave); Close ends and waits for every session left, leaves none (mcpx
// is stopping), and only then closes the Sessions.
func TestSessionsEndedInOrder(t *testing.T) {
	f := &testSessions{}
	h := New(f, nil)
	who := principal.Host("")
	var sids []string
	for range 2 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		h.serve(w, r, who)
		if w.Code != http.StatusOK || w.Header().Get(HeaderSessionID) == "" {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		sids = append(sids, w.Header().Get(HeaderSessionID))
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodDelete, "http://127.0.0.1:7777/mcp", nil)
	r.Header.Set(HeaderSessionID, sids[0])
	h.serve(w, r, who)
	if w.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body)
	}
	h.Close() // waits for the deleted session's clean-up too
	got := f.recorded()
	deleted := slices.DeleteFunc(slices.Clone(got), func(c string) bool { return !strings.HasPrefix(c, "http-1 ") })
	if want := []string{"http-1 End " + strconv.Itoa(int(EndDeleted)), "http-1 Close", "http-1 Leave"}; !slices.Equal(deleted, want) {
		t.Errorf("the deleted session was asked %q, want %q", deleted, want)
	}
	rest := slices.DeleteFunc(slices.Clone(got), func(c string) bool { return strings.HasPrefix(c, "http-1 ") })
	if want := []string{"http-2 End " + strconv.Itoa(int(EndStopping)), "http-2 Close", "Sessions Close"}; !slices.Equal(rest, want) {
		t.Errorf("Close asked %q, want %q", rest, want)
	}
}
