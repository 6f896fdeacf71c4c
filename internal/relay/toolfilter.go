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
// clientInfo.name; a person's is their groups' (mcpx.auth.groups), which
// may make them an admin, and may refuse them jobs. Every face decides
// every operation with it.
func (r *Relay) Policy(who principal.Principal) principal.Policy {
	pol := r.policy(who)
	if r.audit != nil { // a person's refusals are on the record too, and fail closed with it
		pol = pol.WithAuditor(r.audit)
	}
	return pol
}

func (r *Relay) policy(who principal.Principal) principal.Policy {
	if who.IsPerson() {
		cfg := r.cfg.Load()
		if cfg == nil {
			return principal.NewPersonPolicy(who, &config.ToolFilter{Patterns: []string{"!*"}, Path: "no config"}, false, config.DefaultSeparator)
		}
		f, admin := cfg.GroupTools(who.Groups())
		pol := principal.NewPersonPolicy(who, f, admin, cfg.ToolNames.Separator)
		if !cfg.GroupBackground(who.Groups()) {
			pol = pol.WithoutJobs()
		}
		return pol
	}
	f, sep := r.HostTools(who.Token(), who.Client())
	return principal.NewPolicy(who, f, sep)
}
