package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

type askArgs struct {
	Asks          []askItem `json:"asks"`
	WithdrawAfter float64   `json:"withdrawAfter"`
	Complete      bool      `json:"complete"`
}

// askItem is one request the ask tool puts to the client.
type askItem struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (a *askArgs) check() error {
	if len(a.Asks) == 0 {
		return fmt.Errorf("asks: at least one request")
	}
	for _, q := range a.Asks {
		if q.Method == "" {
			return fmt.Errorf("asks: every request needs a method")
		}
	}
	return nil
}

// askID is the id of the ask tool's n-th request to the client.
func askID(n int64) jsonrpc.ID { return jsonrpc.NewStringID("ask-" + strconv.FormatInt(n, 10)) }

func runAsk(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	var a askArgs
	if err := t.decode(&a); err != nil {
		return nil, invalidParams("ask: %v", err)
	}
	if t.modern {
		return askModern(t, &a)
	}
	var answers []json.RawMessage
	for _, q := range a.Asks {
		ans, err := t.askLegacy(ctx, q.Method, q.Params, a.WithdrawAfter)
		if err != nil {
			return nil, err
		}
		answers = append(answers, ans)
		if a.Complete && q.Method == mcp.MethodElicitationCreate {
			var p struct {
				Mode, ElicitationID string
			}
			_ = json.Unmarshal(q.Params, &p)
			if p.Mode == "url" && p.ElicitationID != "" {
				t.s.notify(t.c, jsonrpc.NewNotification(mcp.MethodElicitationComplete, marshal(map[string]string{"elicitationId": p.ElicitationID})))
			}
		}
	}
	return askResult(answers, ""), nil
}

// askLegacy sends one request to the client on the call's stream and
// returns its answer as {"result":…} or {"error":…}; {"withdrawn":reason}
// if withdrawAfter ran out first.
func (t *toolCall) askLegacy(ctx context.Context, method string, params json.RawMessage, withdrawAfter float64) (json.RawMessage, error) {
	id, ch := t.s.questions.Add(askID)
	defer t.s.questions.Remove(id)
	if !t.s.notify(t.c, jsonrpc.NewRequest(id, method, params)) {
		return nil, context.Cause(ctx)
	}
	var withdraw <-chan time.Time
	if withdrawAfter > 0 {
		tm := time.NewTimer(time.Duration(withdrawAfter * float64(time.Second)))
		defer tm.Stop()
		withdraw = tm.C
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return marshal(map[string]any{"error": m.Error}), nil
		}
		return marshal(map[string]json.RawMessage{"result": m.Result}), nil
	case <-withdraw:
		reason := "the demo server gave up waiting"
		t.s.notify(t.c, jsonrpc.NewNotification(mcp.MethodCancelled, marshal(map[string]any{"requestId": id.Raw(), "reason": reason})))
		return marshal(map[string]string{"withdrawn": reason}), nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// askModern runs one 2026-07-28 round: the answers so far travel in
// requestState (base64 of a JSON list; a demo needs no secrecy), the
// next request goes out as input_required, and the last round returns
// every answer.
func askModern(t *toolCall, a *askArgs) (json.RawMessage, error) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
	}
	_ = json.Unmarshal(t.params, &p)
	var answers []json.RawMessage
	if p.RequestState != nil {
		b, err := base64.RawURLEncoding.DecodeString(*p.RequestState)
		if err != nil || json.Unmarshal(b, &answers) != nil {
			return nil, invalidParams("ask: requestState %q is not one this server issued", *p.RequestState)
		}
		key := "q" + strconv.Itoa(len(answers))
		ans, ok := p.InputResponses[key]
		if !ok {
			return nil, invalidParams("ask: inputResponses has no %q", key)
		}
		answers = append(answers, ans)
	}
	state := ""
	if p.RequestState != nil {
		state = *p.RequestState
	}
	if len(answers) == len(a.Asks) {
		return askResult(answers, state), nil
	}
	q := a.Asks[len(answers)]
	req := map[string]json.RawMessage{"method": marshal(q.Method)}
	if q.Params != nil {
		req["params"] = q.Params
	}
	next := base64.RawURLEncoding.EncodeToString(marshal(append([]json.RawMessage{}, answers...)))
	return marshal(map[string]any{
		"resultType":    mcp.ResultTypeInputRequired,
		"inputRequests": map[string]any{"q" + strconv.Itoa(len(answers)): req},
		"requestState":  next,
	}), nil
}

func askResult(answers []json.RawMessage, lastState string) json.RawMessage {
	s := map[string]any{"answers": answers}
	if lastState != "" {
		s["lastRequestState"] = lastState
	}
	structured := marshal(s)
	return toolResult(string(structured), structured, false)
}

type askLaterArgs struct {
	Seconds float64 `json:"seconds"`
	Message string  `json:"message"`
}

func (a *askLaterArgs) check() error { return checkSeconds("seconds", a.Seconds) }

// runAskLater works silently, then asks: a question that comes long after
// its call started (after a host's timer has made the call a job).
func runAskLater(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := askLaterArgs{Seconds: 1, Message: "Go on?"}
	if err := t.decode(&a); err != nil {
		return nil, invalidParams("ask_later: %v", err)
	}
	q := askItem{Method: mcp.MethodElicitationCreate, Params: marshal(map[string]any{"mode": "form", "message": a.Message,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]string{"type": "string"}}}})}
	var p struct {
		RequestState *string `json:"requestState"`
	}
	_ = json.Unmarshal(t.params, &p)
	if p.RequestState == nil { // a retry has worked already
		if err := sleep(ctx, seconds(a.Seconds)); err != nil {
			return nil, err
		}
	}
	if t.modern {
		return askModern(t, &askArgs{Asks: []askItem{q}})
	}
	ans, err := t.askLegacy(ctx, q.Method, q.Params, 0)
	if err != nil {
		return nil, err
	}
	return askResult([]json.RawMessage{ans}, ""), nil
}
