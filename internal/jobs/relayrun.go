package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// jobToken is the progress token of a call that has no host to relay
// progress to: its progress is the job's alone.
var jobToken = json.RawMessage(`"mcpx-job"`)

// RelayRunner runs a stored job's call again through r, with no host:
// its progress goes to the job, the upstream's questions are refused.
func RelayRunner(r *relay.Relay) Runner {
	return func(ctx context.Context, j *store.Job, c *Call) (json.RawMessage, error) {
		params, err := jsonrpc.ParseObject(j.Params)
		if err != nil {
			return nil, fmt.Errorf("reading the job's stored call: %w", err)
		}
		params.Delete("task") // a host's task request, to mcpx: the upstream is called plainly
		return r.CallTool(ctx, nil, relay.Call{
			Server:    j.Server,
			Tool:      j.Tool,
			Params:    params,
			HostToken: jobToken,
			Progress:  ProgressTo(c),
			Principal: j.Principal,
			Person:    j.Principal,
			Host:      "job:" + j.ID,
			Job:       j.ID,
			Who:       c.Spec().Who,
		})
	}
}

// StartRelayed starts spec's call through r as a job at once (a
// background call with no host: the local API's), with the caller's idle
// and hard timeouts (zero: the configured ones); a running job of the
// same principal and call is returned instead of starting another.
func (m *Manager) StartRelayed(ctx context.Context, r *relay.Relay, spec Spec, idle, max time.Duration) (id string, err error) {
	if c := m.Attach(spec.Principal, spec.Key); c != nil {
		return c.ID(), nil
	}
	params, err := jsonrpc.ParseObject(spec.Params)
	if err != nil {
		return "", fmt.Errorf("reading the call: %w", err)
	}
	c, err := m.StartJob(ctx, spec, func(ctx context.Context, c *Call) (json.RawMessage, error) {
		return r.CallTool(ctx, nil, relay.Call{
			Server: spec.Server, Tool: spec.Tool, Params: params, HostToken: jobToken, Progress: ProgressTo(c),
			Principal: spec.Principal, Person: spec.Principal, Host: "job:" + spec.Principal, IdleTimeout: idle, MaxTimeout: max, Job: c.ID(), Who: spec.Who,
		})
	})
	if err != nil {
		return "", err
	}
	return c.ID(), nil
}

// StartJob starts run as a job at once: its row is written before run
// starts, so the answer is the job however fast run ends. When the row
// cannot be written, run never starts and StartJob fails.
func (m *Manager) StartJob(ctx context.Context, spec Spec, run func(ctx context.Context, c *Call) (json.RawMessage, error)) (*Call, error) {
	written := make(chan struct{})
	spec.started = true
	c, err := m.Start(spec, func(ctx context.Context, c *Call) (json.RawMessage, error) {
		<-written
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		return run(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	_, _, err = c.Promote(ctx) // ok: the call cannot end before written
	if err != nil {
		c.cancel(&relay.Cause{Kind: relay.JobCancelled, Detail: "a failed write of its job"})
	}
	close(written)
	if err != nil {
		<-c.done
		return nil, err
	}
	return c, nil
}

// Idempotent reports whether server's tool, as r's pool lists it, is
// annotated idempotentHint: a job of it may run again after a restart.
func Idempotent(ctx context.Context, r *relay.Relay, server, tool string) bool {
	t, found, _ := r.Pool().Tool(ctx, server, tool)
	if !found {
		return false
	}
	var def struct {
		Annotations struct {
			Idempotent bool `json:"idempotentHint"`
		} `json:"annotations"`
	}
	_ = json.Unmarshal(t.Raw, &def)
	return def.Annotations.Idempotent
}

// ProgressTo returns a relay.Call Progress func that notes each
// notification's progress on c.
func ProgressTo(c *Call) func(json.RawMessage) {
	return func(params json.RawMessage) {
		var p Progress
		if json.Unmarshal(params, &p) == nil {
			c.SetProgress(p)
		}
	}
}
