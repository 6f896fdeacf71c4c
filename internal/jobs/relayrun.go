package jobs

import (
	"context"
	"encoding/json"
	"fmt"

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
		return r.CallTool(ctx, nil, relay.Call{
			Server:    j.Server,
			Tool:      j.Tool,
			Params:    params,
			HostToken: jobToken,
			Progress:  ProgressTo(c),
			Principal: j.Principal,
			Host:      "job:" + j.ID,
		})
	}
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
