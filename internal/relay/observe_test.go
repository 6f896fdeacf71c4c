package relay

import (
	"errors"
	"fmt"
	"testing"

	"mcpx/internal/jsonrpc"
)

func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct {
		res  string
		err  error
		want Outcome
	}{
		{`{"content":[]}`, nil, OutcomeOK},
		{`{"content":[],"isError":false}`, nil, OutcomeOK},
		{`{"content":[],"isError":true}`, nil, OutcomeToolError},
		{`{"content":[{"type":"text","text":"\"isError\":true"}]}`, nil, OutcomeOK},
		{``, &Cause{Kind: HostCancelled}, OutcomeCancelled},
		{``, fmt.Errorf("wrapped: %w", &Cause{Kind: IdleTimeout}), OutcomeTimeout},
		{``, &Cause{Kind: HardTimeout}, OutcomeTimeout},
		{``, &BusyError{Server: "s", Full: true}, OutcomeBusy},
		{``, &jsonrpc.Error{Code: -32602, Message: "bad"}, OutcomeError},
		{``, errors.New("upstream exited"), OutcomeFailed},
	} {
		if got := OutcomeOf([]byte(c.res), c.err); got != c.want {
			t.Errorf("OutcomeOf(%s, %v) = %s, want %s", c.res, c.err, got, c.want)
		}
	}
}
