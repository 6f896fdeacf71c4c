package demo

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

type gatedArgs struct {
	Gate          string  `json:"gate"`
	CompleteAfter float64 `json:"completeAfter"`
	Notify        bool    `json:"notify"`
	Text          string  `json:"text"`
}

func (a *gatedArgs) check() error { return nil }

// gate is one URL elicitation of the gated tool: asked for, then complete.
type gate struct {
	done    bool
	refused int // calls answered -32042 or input_required
}

// The gated tool's URL elicitation, as a 2025-11-25 server writes it
// (2026-07-28 drops elicitationId).
type gateElicitation struct {
	Mode          string `json:"mode"`
	ElicitationID string `json:"elicitationId,omitempty"`
	URL           string `json:"url"`
	Message       string `json:"message"`
}

func runGated(_ context.Context, t *toolCall) (json.RawMessage, error) {
	a := gatedArgs{Gate: "g", Text: "through the gate"}
	if err := t.decode(&a); err != nil {
		return errorResult("gated: invalid arguments: %v", err), nil
	}
	s := t.s
	s.mu.Lock()
	if s.gates == nil {
		s.gates = map[string]*gate{}
	}
	g, asked := s.gates[a.Gate]
	if !asked {
		// The first call is refused, whenever the gate completes.
		g = &gate{done: a.CompleteAfter == 0}
		s.gates[a.Gate] = g
	}
	done := g.done && asked
	if !done {
		g.refused++
	}
	refused := g.refused
	s.mu.Unlock()
	if done {
		return toolResult(a.Text, marshal(map[string]any{"gate": a.Gate, "refused": refused}), false), nil
	}
	el := gateElicitation{Mode: "url", ElicitationID: "gate-" + a.Gate,
		URL:     "https://example.test/connect?gate=" + url.QueryEscape(a.Gate) + "&from=demo",
		Message: "Connect your example.test account (gate " + a.Gate + ") to use this tool."}
	if !asked && (a.CompleteAfter > 0 || a.Notify) {
		s.completeGate(g, el.ElicitationID, time.Duration(a.CompleteAfter*float64(time.Second)), a.Notify && !t.modern)
	}
	if t.modern {
		el.ElicitationID = ""
		return marshal(map[string]any{
			"resultType":    mcp.ResultTypeInputRequired,
			"inputRequests": map[string]any{"gate": map[string]any{"method": mcp.MethodElicitationCreate, "params": el}},
			"requestState":  "gate:" + a.Gate,
		}), nil
	}
	return nil, &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "This request requires more information.",
		Data: marshal(map[string]any{"elicitations": []gateElicitation{el}})}
}

// completeGate completes g after d, the simulated user's visit, and then,
// with notify, tells the client (stdio: the only client this process has;
// over HTTP there is no stream to send it on).
func (s *server) completeGate(g *gate, elicitationID string, d time.Duration, notify bool) {
	s.wg.Go(func() {
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-s.stopping:
			return
		}
		s.mu.Lock()
		g.done = true
		s.mu.Unlock()
		s.log.Info("gate complete", "elicitationId", elicitationID)
		if notify && s.out != nil {
			s.out.Write(jsonrpc.NewNotification(mcp.MethodElicitationComplete, marshal(map[string]string{"elicitationId": elicitationID})))
		}
	})
}
