package demo

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendEvent checks the record's hand-written encoding against
// encoding/json's of the same events: the same members, the same values.
func TestAppendEvent(t *testing.T) {
	known, elapsed, progress := true, int64(12), 2.5
	events := []Event{
		{Event: EventRequest, At: "2026-11-29T20:00:00.123456789Z"},
		{Event: EventRequest, ID: json.RawMessage(`7`), Method: "tools/call", Tool: "echo",
			ProgressToken: json.RawMessage(`"p-1"`),
			Meta:          json.RawMessage(`{"progressToken":"p-1","x":{"a":[1,2,{"b":null}]}}`), At: "t"},
		{Event: EventCancelled, RequestID: json.RawMessage(`"s-\"q\""`), Reason: "the host gave up: \"late\"\n\ttab <&> é \u2028",
			Known: &known, ElapsedMs: &elapsed, Tool: "wait", At: "t"},
		{Event: EventFinished, ID: json.RawMessage("{\n  \"spans\": \"lines\"\r\n}"), Outcome: OutcomeResult, ElapsedMs: new(int64), At: "t"},
		{Event: EventRejected, Status: 400, Code: -32020, Reason: "bad header", Session: "s1",
			Headers: map[string]string{"Mcp-Name": "x\x01y", "Mcp-Method": "tools/call", "A": ""}, LastEventID: "9", At: "t"},
		{Event: EventInitialize, Requested: "2025-11-25", ProtocolVersion: "2025-06-18", Known: new(bool), At: "t"},
		{Event: EventProgress, ID: json.RawMessage(`3`), Tool: "export", Progress: &progress, Message: "part 2 of 6", At: "t"},
		{Event: EventProgress, Progress: new(float64), At: "t"},
	}
	for i, e := range events {
		line := appendEvent(nil, &e)
		for _, c := range line {
			if c == '\n' || c == '\r' {
				t.Fatalf("event %d: the line breaks: %s", i, line)
			}
		}
		var got, want any
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("event %d: %s is not JSON: %v", i, line, err)
		}
		if err := json.Unmarshal(marshal(e), &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event %d (-encoding/json +appendEvent):\n%s", i, diff)
		}
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	e := Event{Event: EventRequest, ID: json.RawMessage(`17`), Method: "tools/call", Tool: "echo",
		ProgressToken: json.RawMessage(`"u-17"`),
		Meta: json.RawMessage(`{"progressToken":"u-17","io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"mcpx","version":"dev"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`),
		At: "2026-11-29T20:00:00.123456789Z"}
	b.Run("append", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = appendEvent(buf[:0], &e)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			marshal(e)
		}
	})
}
