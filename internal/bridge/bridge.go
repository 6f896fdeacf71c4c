package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"mcpx/internal/relay"
	"mcpx/internal/upstream"
)

// Bridge carries a relay's tool calls across protocol revisions (a
// relay.Bridge). Make it with New and hand it to the relay
// (relay.SetBridge) before the relay serves.
type Bridge struct {
	r   *relay.Relay
	log *slog.Logger

	sealer   atomic.Pointer[sealer] // requestState of held calls (hold.go)
	instance string                 // names this gateway in the states it seals
	holds    holds

	signIns SignInStarter // set before serving; nil: no sign-ins for hosts
	// personSignIns starts per-person sign-ins (signin.go); nil: none.
	personSignIns PersonSignInStarter
	// exchanger fills a person's record by token exchange (exchange.go);
	// nil: none.
	exchanger TokenExchanger
}

// New returns the bridges of r's calls, sealing requestState under a key
// of its own until SetSealKey. A nil logger discards.
func New(r *relay.Relay, log *slog.Logger) *Bridge {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b := &Bridge{r: r, log: log, instance: randomInstance()}
	b.sealer.Store(newSealer())
	return b
}

// CallTool implements relay.Bridge: c is called as a task of its
// server's if its tool requires one (upstreamtask.go), or resumed if it
// is a host's retry (hold.go, upstate.go, urlelicit.go), else relayed
// round after round (call); then a refusal for want of a sign-in is
// answered (exchange.go, signin.go), and for a 2026-07-28 host
// (Holdable) an upstream's -32042 becomes input_required, or -32021
// (urlelicit.go).
func (b *Bridge) CallTool(ctx context.Context, e *relay.Entry, c relay.Call) (json.RawMessage, error) {
	if c.Resume == nil && b.upstreamTaskRequired(ctx, c.Server, c.Tool) {
		return b.callAsTask(ctx, e, c) // upstreamtask.go
	}
	res, err := b.call(ctx, e, c, false)
	if xres, xerr, ok := b.exchangeAndRetry(ctx, e, &c, err); ok {
		res, err = xres, xerr
	}
	if sres, serr, ok := b.signInElicitation(&c, err); ok {
		return sres, serr
	}
	if !c.Holdable {
		return res, err
	}
	els, ok, bad := urlElicitations(err)
	switch {
	case !ok:
		return res, err
	case bad != nil:
		// Never a -32042 to a 2026-07-28 host: it "MUST NOT" see one.
		return nil, fmt.Errorf("upstream %q refused the call with a URL elicitation mcpx cannot relay: %w", c.Server, bad)
	}
	return b.urlInputRequired(&c, els)
}

// call relays call through the relay's Live, round after round: a
// server's task followed to its end (asTask: mcpx asked for one), a
// legacy host's input_required rounds asked of it (mrtr.go), a Holdable
// call whose legacy upstream asks its host held (hold.go).
func (b *Bridge) call(ctx context.Context, e *relay.Entry, call relay.Call, asTask bool) (json.RawMessage, error) {
	if call.Resume != nil {
		if strings.HasPrefix(call.Resume.State, statePrefix) {
			return b.resume(ctx, e, call)
		}
		// Every state a host is given is sealed (upstate.go): this one
		// was not. The server is named first, as a call's would be.
		if _, err := b.r.Pool().SessionAs(ctx, call.Server, call.SessionKey, call.Person); err != nil {
			return nil, err
		}
		return nil, stateError(errStateForged)
	}
	l, err := b.r.Begin(ctx, e, call)
	if err != nil {
		return nil, err
	}
	defer l.End()
	ctx = l.Context()
	c := l.Call()
	// A 2026-07-28 upstream that needs input answers input_required; for
	// a legacy host (c.Asker set) mcpx asks the host and retries, a new
	// request each round, with the host's answers and the upstream's
	// requestState byte for byte. A 2026-07-28 host (no Asker) gets the
	// result as it is, and retries itself.
	//
	// The retry base is the params before the first round stamped their
	// _meta (Start does). Params without a _meta gain only that member,
	// so theirs is made when a retry needs it, without it: most calls
	// never retry. Others are encoded now.
	orig := c.Params
	var base json.RawMessage
	if c.Asker != nil && !c.Holdable && orig.Has("_meta") {
		base = orig.Bytes()
	}
	for round := 1; ; round++ {
		res, req, err := l.Round()
		if task, ok := createdTask(res, asTask); ok && err == nil {
			res, req, err = b.followTask(l, task) // upstreamtask.go
		}
		if errors.Is(err, relay.ErrHold) {
			l.Hold() // End leaves it running
			args, _ := c.Params.Get("arguments")
			return b.hold(&heldCall{live: l, req: req, server: c.Server, tool: c.Tool,
				principal: c.Principal, digest: requestDigest(c.Server, c.Tool, args), pending: map[string]*upstream.Inbound{}})
		}
		if err != nil || c.Asker == nil || c.Holdable {
			if err == nil && c.Holdable {
				res = b.sealUpstreamState(c, res)
			}
			return res, err
		}
		ir, ok := inputRequired(res)
		if !ok {
			return res, nil
		}
		if round > maxInputRounds {
			return toolError(fmt.Sprintf("upstream %q still asked for input after %d rounds; mcpx gave up", c.Server, maxInputRounds)), nil
		}
		answers, failed, pass, err := b.answerRound(ctx, l, ir)
		if pass {
			return res, nil
		}
		if err != nil || failed != nil {
			return failed, err
		}
		if base == nil {
			p := orig.Clone()
			p.Delete("_meta") // what the first round added
			base = p.Bytes()
		}
		c.Params = retryParams(base, answers, ir.state)
	}
}
