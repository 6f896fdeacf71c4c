package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// refusingAsker declares nothing and says why.
type refusingAsker struct{ why string }

func (refusingAsker) Can(string, json.RawMessage) bool { return false }
func (refusingAsker) Ask(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("never asked")
}
func (refusingAsker) Notify(string, json.RawMessage) {}
func (r refusingAsker) Refusal(method string, _ json.RawMessage) *jsonrpc.Error {
	if r.why == "" {
		return nil
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: %s", method, r.why)
}

// noWait is a call whose idle timer nothing pauses.
type noWait struct{}

func (noWait) WaitOnHost(int) {}

// TestInputRoundRefusal: an asker that says why it cannot take a
// question has that said in the tool error of a 2026-07-28 upstream's
// input_required round; one that does not leaves the usual words.
func TestInputRoundRefusal(t *testing.T) {
	ir, ok := inputRequired(json.RawMessage(`{"resultType":"input_required","inputRequests":{"q0":{"method":"elicitation/create","params":{"mode":"form","message":"?"}}}}`))
	if !ok {
		t.Fatal("no input_required")
	}
	b := New(nil, nil)
	for _, c := range []struct{ why, want string }{
		{"job job_x's host left", `upstream \"s\" needs elicitation/create in form mode: elicitation/create: job job_x's host left`},
		{"", `upstream \"s\" needs elicitation/create in form mode, which this host did not declare`},
	} {
		call := &relay.Call{Server: "s", Asker: refusingAsker{c.why}}
		_, failed, err := b.answerInputRequests(context.Background(), call, noWait{}, ir)
		if err != nil || !strings.Contains(string(failed), c.want) {
			t.Errorf("why %q: %s %v, want %s", c.why, failed, err, c.want)
		}
	}
}
