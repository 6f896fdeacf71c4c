package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// A legacy upstream that cannot go on until the user completes a URL
// interaction ends the call with -32042, URLElicitationRequiredError
// (2025-11-25 client/elicitation.mdx, "URL Elicitation Required Error"),
// for the client to have the user complete it and retry. 2026-07-28 took
// that code away ("Implementations of this protocol version MUST NOT
// emit": basic/index.mdx, Error Codes) along with elicitationId and
// notifications/elicitation/complete (changelog item 11): a 2026-07-28
// server asks with input_required, URL-mode elicitations among its
// inputRequests, and learns the outcome from the retry. So for a
// 2026-07-28 host mcpx answers the -32042 in the upstream's stead:
// input_required with the URL elicitations, under a requestState mcpx
// seals; the host's retry makes mcpx call the tool again (the first call
// ended with the error). Legacy hosts get the error as it is.

// urlElicitations reads the URL-mode elicitations of an upstream's
// -32042. ok is false when err is no upstream -32042; bad when it is one
// mcpx cannot relay (no elicitations, or one that is not URL mode with a
// url and a message, as the spec requires).
func urlElicitations(err error) (els []*jsonrpc.Object, ok bool, bad error) {
	if err == nil {
		return nil, false, nil // before errors.As's targets, which escape: most calls succeed
	}
	var rpcErr *jsonrpc.Error
	var start *upstream.StartError
	if !errors.As(err, &rpcErr) || errors.As(err, &start) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		return nil, false, nil
	}
	var data struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) == 0 {
		return nil, true, errors.New("its -32042 lists no elicitations")
	}
	for i, raw := range data.Elicitations {
		obj, perr := jsonrpc.ParseObject(raw)
		if perr != nil {
			return nil, true, fmt.Errorf("elicitation %d of its -32042 is not an object", i)
		}
		mode, _ := obj.Get("mode")
		url, _ := obj.Get("url")
		msg, _ := obj.Get("message")
		u, uok := jsonrpc.Unquote(url)
		_, mok := jsonrpc.Unquote(msg)
		if string(mode) != `"url"` || !uok || u == "" || !mok {
			return nil, true, fmt.Errorf("elicitation %d of its -32042 is not a URL-mode elicitation with a url and a message", i)
		}
		els = append(els, obj)
	}
	return els, true, nil
}

// urlInputRequired answers a 2026-07-28 host's call that its upstream
// refused with -32042 (err): input_required with each URL elicitation
// under a key of mcpx's and a requestState naming no held call (the
// upstream call has ended) but binding the retry as a held call's does.
// A host whose request did not declare URL-mode elicitation gets the
// 2026-07-28 error for a missing capability, -32021 (basic/index.mdx: a
// request that "requires a capability the client did not include"
// MUST get it); mcpx must not send it an inputRequests it did not declare
// (basic/patterns/mrtr.mdx; client/elicitation.mdx, Capabilities).
func (b *Bridge) urlInputRequired(c *relay.Call, els []*jsonrpc.Object) (json.RawMessage, error) {
	if c.Asker == nil || !c.Asker.Can(mcp.MethodElicitationCreate, json.RawMessage(`{"mode":"url"}`)) {
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredCapability,
			Message: fmt.Sprintf("upstream %q needs the user to complete a URL-mode elicitation, which this request's capabilities do not declare", c.Server),
			Data:    json.RawMessage(`{"requiredCapabilities":{"elicitation":{"url":{}}}}`)}
	}
	requests := map[string]inputRequest{}
	var keys, ids []string
	for i, el := range els {
		key := fmt.Sprintf("mcpx-%d", i+1)
		keys = append(keys, key)
		if raw, ok := el.Get("elicitationId"); ok {
			id, _ := jsonrpc.Unquote(raw)
			ids = append(ids, id)
		}
		// 2026-07-28 has no elicitationId: mcpx's state does its work.
		el.Delete("elicitationId")
		requests[key] = inputRequest{mcp.MethodElicitationCreate, el.Bytes()}
	}
	d := b.inputTimeout()
	args, _ := c.Params.Get("arguments")
	state := b.sealer.Load().seal(holdState{URL: keys, Principal: c.Principal, Server: c.Server, Tool: c.Tool,
		Digest: requestDigest(c.Server, c.Tool, args), Expires: time.Now().Add(d).UnixMilli()})
	b.log.Info("upstream needs a URL elicitation: asking the host with input_required", "server", c.Server, "tool", c.Tool, "elicitationIds", ids, "keys", keys)
	return inputRequiredResult(requests, state), nil
}

// reissue answers a host's retry of a call its upstream refused with
// -32042 (st, opened): the tool is called again, a new upstream request
// without the retry's inputResponses and requestState, which are mcpx's
// business, not the legacy upstream's. If the upstream still needs the
// URL interaction, its -32042 becomes a new input_required. If the user
// declined or cancelled one of the URL interactions, the upstream is not
// called: it said it cannot go on without them.
//
// A URL-mode accept is consent, not completion (2026-07-28
// client/elicitation.mdx, "URL Mode Elicitation Requests"): the host may
// retry before the user is done, and the upstream then answers -32042
// again, which reaches the host as input_required again.
//
// The state names no held call, so nothing is taken when it is used: it
// serves until it expires, and a replay is this host calling this tool
// with these arguments again, which it may do anyway.
func (b *Bridge) reissue(ctx context.Context, e *relay.Entry, c relay.Call, st holdState) (json.RawMessage, error) {
	var responses map[string]struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(c.Resume.Responses, &responses)
	for _, k := range st.URL {
		if a, ok := responses[k]; ok && a.Action != "" && a.Action != "accept" {
			b.log.Info("the user did not accept a URL elicitation: not calling the upstream again", "server", c.Server, "tool", c.Tool, "key", k, "action", a.Action)
			return toolError(fmt.Sprintf("upstream %q cannot run %s until the user completes the URL interaction it asked for; the user answered %q, so mcpx did not call it again",
				c.Server, c.Tool, a.Action)), nil
		}
	}
	c.Params.Delete("inputResponses")
	c.Params.Delete("requestState")
	c.Resume = nil
	return b.call(ctx, e, c, false)
}

// withoutElicitationID returns a legacy URL-mode elicitation/create's
// params as a 2026-07-28 host reads them: without elicitationId, which
// that revision removed (changelog item 11); anything else as it is.
func withoutElicitationID(method string, params json.RawMessage) json.RawMessage {
	if mcp.URLElicitationID(method, params) == "" {
		return params
	}
	obj, err := jsonrpc.ParseObject(params)
	if err != nil || !obj.Delete("elicitationId") {
		return params
	}
	return obj.Bytes()
}
