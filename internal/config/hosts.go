package config

import "time"

// Host is what the config says of one MCP host: the "mcpx.hosts" block's
// member of its name. The timer fields are found by the clientInfo.name
// the host sends; the tool filter by the name of the named token it
// holds over HTTP, else by its clientInfo.name. A nil field leaves mcpx's
// own value for the host (its built-in profile, or the default for a
// host mcpx does not know; every tool for the filter).
type Host struct {
	// Timeout is how long the host waits for a tool call's result
	// ("timeout"); 0 means the host has no timer.
	Timeout *time.Duration
	// ResetOnProgress says whether a progress notification restarts the
	// host's timer ("resetOnProgress").
	ResetOnProgress *bool
	// Tools, if not nil, limits the tools the host sees and may call
	// ("tools"; see [ToolFilter]).
	Tools *ToolFilter
}

// hostFields are the fields of one host's object. Each has a case in
// hosts; a new field is added to both.
var hostFields = []string{"timeout", "resetOnProgress", "tools"}

// hosts reads the "mcpx.hosts" block: an object keyed by host name.
func (p *parser) hosts(n *node, at path) (map[string]*Host, error) {
	if _, err := p.object(n, at, nil); err != nil {
		return nil, err
	}
	out := make(map[string]*Host, len(n.members))
	for _, m := range n.members {
		at := at.key(m.key)
		if m.key == "" {
			return nil, p.errorf(m.off, at, "must name a host by the clientInfo.name it sends")
		}
		if _, err := p.object(m.val, at, hostFields); err != nil {
			return nil, err
		}
		h := &Host{}
		for _, f := range m.val.members {
			at := at.key(f.key)
			switch f.key {
			case "timeout":
				d, err := p.duration(f.val, at)
				if err != nil {
					return nil, err
				}
				h.Timeout = &d
			case "resetOnProgress":
				b, err := p.boolean(f.val, at)
				if err != nil {
					return nil, err
				}
				h.ResetOnProgress = &b
			case "tools":
				t, err := p.toolFilter(f.val, at)
				if err != nil {
					return nil, err
				}
				h.Tools = t
			}
		}
		out[m.key] = h
	}
	return out, nil
}
