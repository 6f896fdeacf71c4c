package hostserver

import (
	"testing"

	"mcpx/internal/jsonrpc"
)

func TestParseAccept(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want accept
	}{
		{nil, accept{true, true}},
		{[]string{"application/json, text/event-stream"}, accept{true, true}},
		{[]string{"application/json"}, accept{true, false}},
		{[]string{"text/event-stream"}, accept{false, true}},
		{[]string{"*/*"}, accept{true, true}},
		{[]string{"text/html", "application/*;q=0.5"}, accept{true, false}},
		{[]string{"application/json;q=0, text/event-stream"}, accept{false, true}},
		{[]string{"text/html"}, accept{false, false}},
	} {
		if got := parseAccept(tc.in); got != tc.want {
			t.Errorf("parseAccept(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                               "plain",
		"=?base64?SGVsbG8sIOS4lueVjA==?=":     "Hello, 世界",
		"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=": "=?base64?literal?=",
		"=?base64?unterminated":               "=?base64?unterminated",
		"=?BASE64?SGk=?=":                     "=?BASE64?SGk=?=", // markers are case-sensitive
	} {
		if got, err := decodeHeaderValue(in); err != nil || got != want {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := decodeHeaderValue("=?base64?not base64!?="); err == nil {
		t.Error("bad base64 accepted")
	}
}

// isResponse relies on how jsonrpc.Message.Encode writes messages.
func TestIsResponse(t *testing.T) {
	for _, tc := range []struct {
		m    *jsonrpc.Message
		want bool
	}{
		{jsonrpc.NewResult(jsonrpc.NewIntID(1), []byte(`{}`)), true},
		{jsonrpc.NewError(jsonrpc.NewStringID("a"), jsonrpc.Errorf(-1, "x")), true},
		{jsonrpc.NewError(jsonrpc.ID{}, jsonrpc.Errorf(-1, "x")), true},
		{jsonrpc.NewNotification("notifications/progress", []byte(`{"progress":1}`)), false},
	} {
		if got := isResponse(tc.m.Encode()); got != tc.want {
			t.Errorf("isResponse(%s) = %v", tc.m.Encode(), got)
		}
	}
}
