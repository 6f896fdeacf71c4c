package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// maxInputRounds bounds the input_required rounds of one call relayed to
// a legacy host, against an upstream that never stops asking.
const maxInputRounds = 16

// inputReq is a 2026-07-28 InputRequiredResult: its requests by key, and
// its requestState exactly as the upstream wrote it (nil if none).
type inputReq struct {
	keys     []string // sorted: the host is asked in a stable order
	requests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	state json.RawMessage
}

// inputRequired reports whether res is an input_required result, and
// reads it.
func inputRequired(res json.RawMessage) (*inputReq, bool) {
	if !bytes.Contains(res, []byte(`"`+mcp.ResultTypeInputRequired+`"`)) {
		// The value is compared as written below: a result without these
		// bytes has none, and is not parsed (most results).
		return nil, false
	}
	obj, err := jsonrpc.ParseObject(res)
	if err != nil {
		return nil, false
	}
	if rt, ok := obj.Get("resultType"); !ok || string(rt) != `"`+mcp.ResultTypeInputRequired+`"` {
		return nil, false
	}
	ir := &inputReq{}
	if raw, ok := obj.Get("inputRequests"); ok {
		_ = json.Unmarshal(raw, &ir.requests)
	}
	for k := range ir.requests {
		ir.keys = append(ir.keys, k)
	}
	sort.Strings(ir.keys)
	ir.state, _ = obj.Get("requestState")
	return ir, true
}

// retryParams are the params of a retry (docs/protocol-notes.md §7.4): the
// original params (base) with inputResponses and, if the upstream sent
// one, its requestState byte for byte.
func retryParams(base json.RawMessage, answers *jsonrpc.Object, state json.RawMessage) *jsonrpc.Object {
	p, err := jsonrpc.ParseObject(base)
	if err != nil {
		p = &jsonrpc.Object{}
	}
	p.Set("inputResponses", answers.Bytes())
	if state != nil {
		p.Set("requestState", state)
	}
	return p
}

// answerInputRequests puts each of an input_required result's requests
// to the call's legacy host, in key order, and returns the answers. A
// request the host did not declare the capability for ends the call with
// a tool error (failed): a legacy host cannot be told of input_required.
// The host's own JSON-RPC error ends the call with that error. If ctx
// ends first, the question is withdrawn from the host and ctx's cause
// returned; the upstream has nothing to cancel (its request ended with
// input_required).
func (b *Bridge) answerInputRequests(ctx context.Context, c *relay.Call, w hostWaiter, ir *inputReq) (answers *jsonrpc.Object, failed json.RawMessage, err error) {
	asker, server := c.Asker, c.Server
	answers = &jsonrpc.Object{}
	if len(ir.keys) == 0 {
		return nil, toolError(fmt.Sprintf("upstream %q answered input_required without inputRequests", server)), nil
	}
	for _, k := range ir.keys {
		q := ir.requests[k]
		if !asker.Can(q.Method, q.Params) {
			what := q.Method
			if mode := mcp.ElicitationMode(q.Method, q.Params); mode != "" {
				what += " in " + mode + " mode"
			}
			if why := refusal(asker, q.Method, q.Params); why != nil {
				return nil, toolError(fmt.Sprintf("upstream %q needs %s: %s", server, what, why.Message)), nil
			}
			return nil, toolError(fmt.Sprintf("upstream %q needs %s, which this host did not declare", server, what)), nil
		}
	}
	w.WaitOnHost(1)
	defer w.WaitOnHost(-1)
	for _, k := range ir.keys {
		q := ir.requests[k]
		b.log.Info("relaying an upstream's input request to the host", "server", server, "method", q.Method, "key", k)
		res, err := asker.Ask(ctx, q.Method, withElicitationID(q.Method, q.Params))
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			return nil, nil, rpcErr
		case err != nil:
			return nil, nil, err
		}
		answers.Set(k, res)
	}
	return answers, nil, nil
}

// hostWaiter pauses a call's idle timer while its host is asked
// (relay.Live).
type hostWaiter interface{ WaitOnHost(delta int) }

// refusal is why asker cannot take method, if it says (a relay.Refuser);
// nil: the host did not declare the capability.
func refusal(asker relay.Asker, method string, params json.RawMessage) *jsonrpc.Error {
	if r, ok := asker.(relay.Refuser); ok {
		return r.Refusal(method, params)
	}
	return nil
}

// toolError is a tool result that failed with text.
func toolError(text string) json.RawMessage {
	return jsonrpc.MustMarshal(struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}{Content: []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{{"text", text}}, IsError: true})
}

// elicitationIDs numbers the elicitationIds mcpx makes up.
var elicitationIDs atomic.Uint64

// withElicitationID returns a 2026-07-28 URL-mode elicitation/create's
// params as a legacy host must get them: with the elicitationId 2025-11-25
// requires of URL mode (schema ElicitRequestURLParams; "unique within the
// context of the server"), made up by mcpx, which is that server to the
// host. 2026-07-28 removed it (changelog item 11), and with it
// notifications/elicitation/complete, so mcpx never sends the host a
// completion for it: the host gets the call's result instead, once the
// upstream, retried with the host's answer, has it. Params that have one,
// or are no URL-mode elicitation, are returned as they are.
//
// Such a legacy host is asked within its call, as 2025-11-25 servers do;
// mcpx does not end the call with -32042 for it to retry: that retry
// would be a new request with nothing to carry the upstream's
// requestState, which mcpx would then have to keep between the host's
// requests, and 2025-11-25 makes -32042 a server's option ("MAY"), not
// its duty.
func withElicitationID(method string, params json.RawMessage) json.RawMessage {
	if mcp.ElicitationMode(method, params) != "url" {
		return params
	}
	obj, err := jsonrpc.ParseObject(params)
	if err != nil || obj.Has("elicitationId") {
		return params
	}
	obj.Set("elicitationId", jsonrpc.Quote(fmt.Sprintf("mcpx-elicitation-%d", elicitationIDs.Add(1))))
	return obj.Bytes()
}

// askInput puts ir to ia and returns its answers as the retry's
// inputResponses.
func askInput(ctx context.Context, ia relay.InputAsker, ir *inputReq) (*jsonrpc.Object, bool, error) {
	reqs := make(map[string]relay.InputRequest, len(ir.keys))
	for _, k := range ir.keys {
		reqs[k] = relay.InputRequest{Method: ir.requests[k].Method, Params: ir.requests[k].Params}
	}
	got, pass, err := ia.AskInput(ctx, ir.keys, reqs)
	if pass || err != nil {
		return nil, pass, err
	}
	answers := &jsonrpc.Object{}
	for _, k := range ir.keys {
		if a, ok := got[k]; ok {
			answers.Set(k, a)
		}
	}
	return answers, false, nil
}

// answerRound answers one input_required round: through asker if it is
// an InputAsker (pass: the call answers the input_required as it is),
// else by asking the host one request at a time.
func (b *Bridge) answerRound(ctx context.Context, l *relay.Live, ir *inputReq) (answers *jsonrpc.Object, failed json.RawMessage, pass bool, err error) {
	if ia, ok := l.Call().Asker.(relay.InputAsker); ok {
		answers, pass, err = askInput(ctx, ia, ir)
		return answers, nil, pass, err
	}
	answers, failed, err = b.answerInputRequests(ctx, l.Call(), l, ir)
	return answers, failed, false, err
}
