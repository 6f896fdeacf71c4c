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

// Relayed is Now for a call relayed through r with params and no host (a
// background call: the local API's), with the caller's idle and hard
// timeouts (zero: the configured ones). Its progress goes to the job.
func Relayed(r *relay.Relay, params *jsonrpc.Object, idle, max time.Duration) Way {
	return Now(func(ctx context.Context, c *Call) (json.RawMessage, error) {
		spec := c.Spec()
		return r.CallTool(ctx, nil, relay.Call{
			Server: spec.Server, Tool: spec.Tool, Params: params, HostToken: jobToken, Progress: ProgressTo(c),
			Principal: spec.Principal, Person: spec.Principal, Host: "job:" + spec.Principal, IdleTimeout: idle, MaxTimeout: max, Job: c.ID(), Who: spec.Who,
		})
	})
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
