package mcp

import "testing"

func TestCancelledRequestID(t *testing.T) {
	for _, tc := range []struct {
		params string
		id     string
		ok     bool
	}{
		{`{"requestId":7,"reason":"x"}`, `7`, true},
		{`{"reason":"x", "requestId" : "a b" }`, `"a b"`, true},
		{`{"reason":"x"}`, ``, false},
		{`not json`, ``, false},
		{``, ``, false},
	} {
		id, ok := CancelledRequestID([]byte(tc.params))
		if id != tc.id || ok != tc.ok {
			t.Errorf("%s: got %q %v, want %q %v", tc.params, id, ok, tc.id, tc.ok)
		}
	}
}
