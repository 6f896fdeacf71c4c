package relay

import (
	"mcpx/internal/config"
	"mcpx/internal/hostprofile"
)

// HostProfile returns the tool-call timer of the host that sent
// clientInfo.name name: mcpx's built-in profile, under what the current
// config's mcpx.hosts says of it (a reload applies to calls from then on).
func (r *Relay) HostProfile(name string) hostprofile.Profile {
	return hostprofile.Lookup(name, *r.hosts.Load())
}

// hostOverrides returns cfg's mcpx.hosts as hostprofile reads it.
func hostOverrides(cfg *config.Config) *map[string]hostprofile.Override {
	var m map[string]hostprofile.Override
	if cfg != nil && len(cfg.Hosts) > 0 {
		m = make(map[string]hostprofile.Override, len(cfg.Hosts))
		for name, h := range cfg.Hosts {
			m[name] = hostprofile.Override{Timeout: h.Timeout, ResetOnProgress: h.ResetOnProgress}
		}
	}
	return &m
}
