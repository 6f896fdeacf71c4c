package relay

import (
	"mcpx/internal/config"
	"mcpx/internal/principal"
)

// HostTools returns the tool filter the current config gives the host
// known by names (its token's name, then its clientInfo.name), or nil,
// and the tool name separator its patterns are written with. A reload
// applies to requests from then on.
func (r *Relay) HostTools(names ...string) (f *config.ToolFilter, sep string) {
	cfg := r.cfg.Load()
	if cfg == nil {
		return nil, config.DefaultSeparator
	}
	return cfg.HostTools(names...), cfg.ToolNames.Separator
}

// Policy returns what who may do under the current config: its tool
// filter is the one mcpx.hosts gives its named token's name, else its
// clientInfo.name. Every face decides every operation with it.
func (r *Relay) Policy(who principal.Principal) principal.Policy {
	f, sep := r.HostTools(who.Token(), who.Client())
	pol := principal.NewPolicy(who, f, sep)
	if r.audit != nil {
		pol = pol.WithAuditor(r.audit)
	}
	return pol
}
