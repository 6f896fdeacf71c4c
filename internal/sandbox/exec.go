package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Host serves what a script asks of the world.
type Host interface {
	// Call answers one host call of the script's prelude. ctx ends when
	// the script does: with the cause of Exec's ctx when that ended it,
	// else with the Script's EndCause. Calls run concurrently.
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify receives what the prelude sends without an answer, in order,
	// on the goroutine that runs Exec.
	Notify(kind string, data json.RawMessage)
	// Log receives each console line, in order, on the same goroutine.
	Log(line string)
}

// Script is what Exec runs.
type Script struct {
	// Code is the script's body: JavaScript or TypeScript, with top-level
	// await and return.
	Code string
	// Prelude is a JavaScript function expression, called with the host
	// bridge (call, notify) before the script runs, to build its API.
	Prelude string
	Limits  Limits
	// EndCause is the cause the host calls still running when the script
	// ends by itself are cancelled with.
	EndCause error
}

// Result is what a script left.
type Result struct {
	// Value is the script's value as JSON; nil for undefined.
	Value json.RawMessage
	// Console is what it logged, within its output limit.
	Console []string
	// Calls is how many host calls it made.
	Calls int
}

// stopGrace is how long a stopped child has to exit before it is killed.
const stopGrace = 100 * time.Millisecond

// errEnded is the default EndCause.
var errEnded = errors.New("the script ended")

// Exec runs s in a child and returns its result, or why it failed: a
// *ScriptError, a *LimitError, ctx's cause when ctx ended first, or an
// error wrapping ErrChildFailed. The console lines are in the Result
// whatever the error. It returns once every Host call has returned; the
// child, told to stop if it has not ended, is left to the pool's Run to
// reap (or reaped before Exec returns, without Run).
func (p *Pool) Exec(ctx context.Context, s Script, h Host) (*Result, error) {
	res := &Result{}
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	ch, err := p.take()
	if err != nil {
		return res, err
	}
	lim := s.Limits.withDefaults()
	calls, endCalls := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		cause := s.EndCause
		if cause == nil {
			cause = errEnded
		}
		endCalls(cause)
		p.release(ch)
		wg.Wait()
	}()
	ch.limit.Store(int64(lim.lineLimit()))
	if err := ch.send(&message{Op: opRun, Code: s.Code, Prelude: s.Prelude, Limits: &lim}); err != nil {
		return res, ch.deathError(p.mem, lim)
	}
	logged := 0
	for {
		select {
		case <-ctx.Done():
			why := context.Cause(ctx)
			endCalls(why)
			ch.send(&message{Op: opStop, Reason: why.Error()})
			return res, why
		case m, ok := <-ch.msgs:
			if !ok {
				return res, ch.deathError(p.mem, lim)
			}
			switch m.Op {
			case opCall:
				res.Calls++
				if res.Calls > lim.MaxCalls { // the child counts too: a child that does not is broken
					ch.kill()
					return res, fmt.Errorf("%w: it made more calls than its limit", ErrChildFailed)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := h.Call(calls, m.Method, m.Params)
					reply := &message{Op: opReply, ID: m.ID, Result: out}
					if err != nil {
						reply.Error = err.Error()
						if reply.Error == "" {
							reply.Error = "failed"
						}
					} else if len(out) == 0 {
						reply.Result = json.RawMessage("null")
					}
					ch.send(reply)
				}()
			case opNotify:
				h.Notify(m.Kind, m.Data)
			case opLog:
				if logged <= lim.MaxOutputBytes+256 {
					logged += len(m.Text) + 1
					res.Console = append(res.Console, m.Text)
					h.Log(m.Text)
				}
			case opDone:
				res.Value = m.Value
				return res, failed(m.Fail)
			}
		}
	}
}

// failed turns the child's failure into an error.
func failed(f *failure) error {
	switch {
	case f == nil:
		return nil
	case f.Kind == failLimit:
		return &LimitError{Limit: f.Limit, Detail: f.Detail}
	case f.Kind == failStopped:
		return fmt.Errorf("%w: it stopped unasked", ErrChildFailed)
	}
	return &ScriptError{Message: f.Message, Syntax: f.Kind == failSyntax}
}
