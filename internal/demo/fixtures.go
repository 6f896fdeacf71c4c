package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// runCancellations returns the cancellations received so far, as a JSON
// array in text and as structuredContent {"cancellations":[...]}.
func runCancellations(_ context.Context, t *toolCall) (json.RawMessage, error) {
	list := marshal(t.s.rec.cancelled())
	structured := append(append([]byte(`{"cancellations":`), list...), '}')
	return toolResult(string(list), structured, false), nil
}

// runEcho returns its arguments: their JSON as text, and their exact bytes
// as structuredContent.
func runEcho(_ context.Context, t *toolCall) (json.RawMessage, error) {
	args := t.args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	return toolResult(string(args), args, false), nil
}

// runRaw returns RawResultJSON as it is.
func runRaw(context.Context, *toolCall) (json.RawMessage, error) {
	return json.RawMessage(RawResultJSON), nil
}

// runGarbage writes a line that is not JSON, then answers.
func runGarbage(_ context.Context, t *toolCall) (json.RawMessage, error) {
	t.c.out.WriteRaw([]byte("this is not json"))
	return textResult("wrote a line that is not JSON before this result"), nil
}

// runFail fails as a tool, not as a protocol.
func runFail(context.Context, *toolCall) (json.RawMessage, error) {
	return errorResult("the fail tool always fails: this is a tool error (isError), not a protocol error"), nil
}

type crashArgs struct {
	Code  int     `json:"code"`
	After float64 `json:"after"`
}

func (a *crashArgs) check() error {
	if a.Code < 0 || a.Code > 255 {
		return fmt.Errorf("code must be between 0 and 255, not %d", a.Code)
	}
	return checkSeconds("after", a.After)
}

// runCrash sends one progress, waits, records its exit and calls
// Options.Exit. If Exit returns (a test's), the request gets no response.
func runCrash(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := crashArgs{Code: 3, After: 0.2}
	if err := t.decode(&a); err != nil {
		return errorResult("crash: invalid arguments: %v", err), nil
	}
	t.progress.report(1, 0, fmt.Sprintf("crashing in %g seconds with exit code %d", a.After, a.Code))
	if err := sleep(ctx, seconds(a.After)); err != nil {
		return nil, err
	}
	elapsed := time.Since(t.c.start).Milliseconds()
	t.s.record(Event{Event: EventFinished, ID: t.c.id.Raw(), Method: t.c.method, Tool: t.c.tool, Outcome: OutcomeExit, ElapsedMs: &elapsed})
	t.s.log.Warn("crash tool: exiting", "code", a.Code)
	t.s.cfg.Exit(a.Code)
	return nil, errExited
}
