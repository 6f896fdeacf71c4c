package hostserver

import (
	"encoding/json"
	"testing"

	"mcpx/internal/hosthttp"
	"mcpx/internal/jsonrpc"
)

func TestDeclares(t *testing.T) {
	form := json.RawMessage(`{"mode":"form"}`)
	url := json.RawMessage(`{"mode":"url"}`)
	cases := []struct {
		caps, method string
		params       json.RawMessage
		want         bool
	}{
		{`{}`, "elicitation/create", form, false},
		{`{"elicitation":{}}`, "elicitation/create", form, true},
		{`{"elicitation":{}}`, "elicitation/create", nil, true}, // no mode: form
		{`{"elicitation":{}}`, "elicitation/create", url, false},
		{`{"elicitation":{"url":{}}}`, "elicitation/create", url, true},
		{`{"elicitation":{"url":{}}}`, "elicitation/create", form, false},
		{`{"elicitation":null}`, "elicitation/create", form, false},
		{`{"sampling":{}}`, "sampling/createMessage", nil, true},
		{`{"elicitation":{}}`, "sampling/createMessage", nil, false},
		{`{"roots":{"listChanged":true}}`, "roots/list", nil, true},
		{`{"roots":{}}`, "tools/list", nil, false},
		{`not json`, "roots/list", nil, false},
	}
	for _, c := range cases {
		if got := declares(json.RawMessage(c.caps), c.method, c.params); got != c.want {
			t.Errorf("declares(%s, %s, %s) = %v, want %v", c.caps, c.method, c.params, got, c.want)
		}
	}
}

// TestIsResponse: a request mcpx relays to an HTTP host (id and method)
// is not taken for the request's response.
func TestIsResponseNotRequest(t *testing.T) {
	cases := []struct {
		msg  *jsonrpc.Message
		want bool
	}{
		{jsonrpc.NewResult(jsonrpc.NewIntID(3), json.RawMessage(`{}`)), true},
		{jsonrpc.NewResult(jsonrpc.NewStringID(`a",\"method\":"`), json.RawMessage(`{}`)), true},
		{jsonrpc.NewRequest(jsonrpc.NewIntID(1), "elicitation/create", json.RawMessage(`{}`)), false},
		{jsonrpc.NewRequest(jsonrpc.NewStringID(`x\"y`), "roots/list", nil), false},
		{jsonrpc.NewNotification("notifications/progress", json.RawMessage(`{}`)), false},
	}
	for _, c := range cases {
		if got := hosthttp.IsResponse(c.msg.Encode()); got != c.want {
			t.Errorf("hosthttp.IsResponse(%s) = %v, want %v", c.msg.Encode(), got, c.want)
		}
	}
}

func TestUpstreamCaps(t *testing.T) {
	for _, tc := range []struct {
		caps    string
		carries bool
		want    string
	}{
		{``, true, `{}`},
		{`null`, true, `{}`},
		{`{}`, true, `{}`},
		{`[]`, true, `{}`},
		{`"x"`, true, `{}`},
		{`{"sampling":{},"elicitation":{"form":{}}}`, false, `{}`},
		{`{"sampling":{},"experimental":{"x":1},"elicitation":{"form":{}},"roots":null}`, true, `{"elicitation":{"form":{}},"sampling":{}}`},
		{`{"roots":{"listChanged":true},"roots":{}}`, true, `{"roots":{}}`},
		{`{"s\u0061mpling": { "a" : 1 }}`, true, `{"sampling":{ "a" : 1 }}`},
	} {
		if got := string(upstreamCaps(json.RawMessage(tc.caps), tc.carries)); got != tc.want {
			t.Errorf("upstreamCaps(%s, %v) = %s, want %s", tc.caps, tc.carries, got, tc.want)
		}
	}
}
