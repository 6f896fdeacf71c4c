package config

import "time"

// settings reads the "mcpx" block into c, over the defaults already there.
func (p *parser) settings(n *node, at path, c *Config) error {
	if _, err := p.object(n, at, []string{"idleTimeout", "maxTimeout", "startupTimeout", "probeTimeout",
		"toolNames", "maxMessageBytes", "daemonIdleExit", "maxConcurrentCalls", "queueLength", "queueTimeout",
		"maxCallsPerHost", "idleStop", "inputTimeout", "http"}); err != nil {
		return err
	}
	for _, m := range n.members {
		v, at := m.val, at.key(m.key)
		var err error
		if ok, err := p.inherited(m.key, v, at, c.inheritedFields()); ok {
			if err != nil {
				return err
			}
			continue
		}
		switch m.key {
		case "probeTimeout":
			c.ProbeTimeout, err = p.duration(v, at)
		case "daemonIdleExit":
			c.DaemonIdleExit, err = p.duration(v, at)
		case "maxMessageBytes":
			c.MaxMessageBytes, err = p.integer(v, at, minMessageBytes, maxMessageBytes)
		case "maxCallsPerHost":
			c.MaxCallsPerHost, err = p.integer(v, at, 0, maxCallsPerHost)
		case "inputTimeout":
			c.InputTimeout, err = p.duration(v, at)
		case "toolNames":
			err = p.toolNames(v, at, &c.ToolNames)
		case "http":
			err = p.hostHTTP(v, at, &c.HTTP)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// inheritedFields are the settings of the mcpx block a server inherits
// unless it sets its own (see Server).
type inheritedFields struct {
	idleTimeout, maxTimeout, startupTimeout, queueTimeout, idleStop *time.Duration
	maxConcurrentCalls, queueLength                                 *int
}

func (c *Config) inheritedFields() inheritedFields {
	return inheritedFields{&c.IdleTimeout, &c.MaxTimeout, &c.StartupTimeout, &c.QueueTimeout, &c.IdleStop,
		&c.MaxConcurrentCalls, &c.QueueLength}
}

func (s *Server) inheritedFields() inheritedFields {
	return inheritedFields{&s.IdleTimeout, &s.MaxTimeout, &s.StartupTimeout, &s.QueueTimeout, &s.IdleStop,
		&s.MaxConcurrentCalls, &s.QueueLength}
}

// inherited parses key into f if it is one of the inherited settings, and
// reports whether it was.
func (p *parser) inherited(key string, v *node, at path, f inheritedFields) (bool, error) {
	var err error
	switch key {
	case "idleTimeout":
		*f.idleTimeout, err = p.duration(v, at)
	case "maxTimeout":
		*f.maxTimeout, err = p.duration(v, at)
	case "startupTimeout":
		*f.startupTimeout, err = p.duration(v, at)
	case "queueTimeout":
		*f.queueTimeout, err = p.duration(v, at)
	case "idleStop":
		*f.idleStop, err = p.idleStop(v, at)
	case "maxConcurrentCalls":
		*f.maxConcurrentCalls, err = p.integer(v, at, 0, maxConcurrentCalls)
	case "queueLength":
		*f.queueLength, err = p.integer(v, at, 0, maxQueueLength)
	default:
		return false, nil
	}
	return true, err
}

func (p *parser) toolNames(n *node, at path, t *ToolNames) error {
	f, err := p.object(n, at, []string{"prefix", "separator"})
	if err != nil {
		return err
	}
	if v, ok := f["prefix"]; ok {
		s, err := p.str(v, at.key("prefix"))
		if err != nil {
			return err
		}
		switch PrefixMode(s) {
		case PrefixAlways, PrefixAuto:
			t.Prefix = PrefixMode(s)
		default:
			return p.errorf(v.off, at.key("prefix"), "must be %q or %q", PrefixAlways, PrefixAuto)
		}
	}
	if v, ok := f["separator"]; ok {
		s, err := p.str(v, at.key("separator"))
		if err != nil {
			return err
		}
		if !validSeparator(s) {
			return p.errorf(v.off, at.key("separator"), "must be 1 to %d characters of [A-Za-z0-9_.-]", maxSeparatorLen)
		}
		t.Separator = s
	}
	return nil
}

func validSeparator(s string) bool {
	if s == "" || len(s) > maxSeparatorLen {
		return false
	}
	for _, c := range []byte(s) {
		if !isWordByte(c) && c != '.' {
			return false
		}
	}
	return true
}
