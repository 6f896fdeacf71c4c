package harness

import (
	"encoding/json"
	"net/http"
	"testing"

	"mcpx/internal/jsonrpc"
)

const ModernAskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"transcript-host","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// AskOverHTTP calls the demo's ask tool (askForm) as h, a 2026-07-28
// host over HTTP, with extra members in its params, and returns the last
// message of the answer.
func AskOverHTTP(t *testing.T, h *RawHost, id, extra string) *jsonrpc.Message {
	t.Helper()
	r := h.Do(`{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[`+AskForm+`]},`+ModernAskMeta+extra+`}}`,
		ModernHeaders("tools/call", "demo__ask"))
	if r.Status != http.StatusOK || len(r.Msgs) == 0 {
		t.Fatalf("%s: %d %s", id, r.Status, r.Body)
	}
	return r.Msgs[len(r.Msgs)-1]
}

// InputRequiredOf reads an input_required result.
func InputRequiredOf(t *testing.T, m *jsonrpc.Message) (keys []string, state string) {
	t.Helper()
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "input_required" {
		t.Fatalf("want input_required, got %s", m.Encode())
	}
	for k := range r.InputRequests {
		keys = append(keys, k)
	}
	return keys, r.RequestState
}
