package hostserver

import (
	"encoding/json"
	"testing"
)

func TestWithTasksExtension(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
		{`{"elicitation":{}}`, `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
		{`{"extensions":{"x/y":{"a":1}}}`, `{"extensions":{"x/y":{"a":1},"io.modelcontextprotocol/tasks":{}}}`},
		{`not json`, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
	} {
		if got := string(withTasksExtension(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("withTasksExtension(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
