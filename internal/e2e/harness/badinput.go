package harness

import (
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
)

// WantError checks that m is a JSON-RPC error with code, raw id wantID and
// a message containing each of words.
func WantError(t *testing.T, what string, m *jsonrpc.Message, code int64, wantID string, words ...string) *jsonrpc.Error {
	t.Helper()
	if !m.IsResponse() || m.Error == nil {
		t.Fatalf("%s: got %s, want an error %d", what, m.Encode(), code)
	}
	if m.Error.Code != code {
		t.Errorf("%s: error code %d (%s), want %d", what, m.Error.Code, m.Error.Message, code)
	}
	if m.ID.String() != wantID {
		t.Errorf("%s: error id %s, want %s", what, m.ID, wantID)
	}
	for _, w := range words {
		if !strings.Contains(m.Error.Message, w) {
			t.Errorf("%s: error message %q does not contain %q", what, m.Error.Message, w)
		}
	}
	return m.Error
}
