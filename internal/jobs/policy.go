package jobs

import (
	"encoding/json"

	"mcpx/internal/principal"
	"mcpx/internal/store"
)

// A job is read, waited on, listed and cancelled as its principal's
// policy decides (principal.Policy.Decide, ReadJob and CancelJob), on
// every face, from what the job keeps: its principal, server and tool,
// and, for a script's job (no server: the tools a script calls are not
// kept), the tool filter the script ran under, which the job's params
// hold in place of a call's (a script's job is never run again).

// scriptParams are a script job's params.
type scriptParams struct {
	HostFilter string `json:"hostFilter,omitempty"`
}

// ScriptParams are the params of the job of a script run under pol: the
// place in the config of pol's tool filter; nil for a policy without
// one.
func ScriptParams(pol principal.Policy) json.RawMessage {
	f, _ := pol.Tools()
	if f == nil {
		return nil
	}
	b, _ := json.Marshal(scriptParams{HostFilter: f.Path})
	return b
}

// Target is what the policy decides an operation on j by.
func Target(j *store.Job) principal.Target {
	return principal.Target{ID: j.ID, Owner: j.Principal, Server: j.Server, Tool: j.Tool, Filter: scriptFilter(j.Server, j.Params)}
}

// Target is what the policy decides an operation on the running job l
// by.
func (l Live) Target() principal.Target {
	return principal.Target{ID: l.ID, Owner: l.Principal, Server: l.Server, Tool: l.Tool, Filter: l.filter}
}

// scriptFilter is the tool filter a script's job ran under, from its
// params; "" for none, and for a call's job.
func scriptFilter(server string, params json.RawMessage) string {
	if server != "" || len(params) == 0 {
		return ""
	}
	var p scriptParams
	_ = json.Unmarshal(params, &p)
	return p.HostFilter
}
