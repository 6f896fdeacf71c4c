package relay

import "mcpx/internal/config"

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
