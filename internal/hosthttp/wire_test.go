package hosthttp

import (
	"testing"

	"mcpx/internal/jsonrpc"
)

func TestParseAccept(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want Accept
	}{
		{nil, Accept{true, true}},
		{[]string{"application/json, text/event-stream"}, Accept{true, true}},
		{[]string{"application/json"}, Accept{true, false}},
		{[]string{"text/event-stream"}, Accept{false, true}},
		{[]string{"*/*"}, Accept{true, true}},
		{[]string{"text/html", "application/*;q=0.5"}, Accept{true, false}},
		{[]string{"application/json;q=0, text/event-stream"}, Accept{false, true}},
		{[]string{"text/html"}, Accept{false, false}},
	} {
		if got := ParseAccept(tc.in); got != tc.want {
			t.Errorf("ParseAccept(%q) = %+v, want %+v", tc.in, got, tc.want)
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
		if got, err := DecodeHeaderValue(in); err != nil || got != want {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := DecodeHeaderValue("=?base64?not base64!?="); err == nil {
		t.Error("bad base64 accepted")
	}
}

// IsResponse relies on how jsonrpc.Message.Encode writes messages.
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
		if got := IsResponse(tc.m.Encode()); got != tc.want {
			t.Errorf("IsResponse(%s) = %v", tc.m.Encode(), got)
		}
	}
}
