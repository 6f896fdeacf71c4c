package config

import "time"

// settings reads the "mcpx" block into c, over the defaults already there.
func (p *parser) settings(n *node, at path, c *Config) error {
	if _, err := p.object(n, at, []string{"idleTimeout", "maxTimeout", "startupTimeout", "probeTimeout",
		"toolNames", "maxMessageBytes", "daemonIdleExit", "maxConcurrentCalls", "queueLength", "queueTimeout",
		"maxCallsPerHost", "idleStop", "inputTimeout", "http", "hosts", "traces", "codeMode", "jobs", "store"}); err != nil {
		return err
	}
	for _, m := range n.members {
		v, at := m.val, at.key(m.key)
		var err error
		switch m.key {
		case "idleTimeout":
			c.IdleTimeout, err = p.duration(v, at)
		case "maxTimeout":
			c.MaxTimeout, err = p.duration(v, at)
		case "startupTimeout":
			c.StartupTimeout, err = p.duration(v, at)
		case "probeTimeout":
			c.ProbeTimeout, err = p.duration(v, at)
		case "daemonIdleExit":
			c.DaemonIdleExit, err = p.duration(v, at)
		case "maxMessageBytes":
			c.MaxMessageBytes, err = p.integer(v, at, minMessageBytes, maxMessageBytes)
		case "maxConcurrentCalls":
			c.MaxConcurrentCalls, err = p.integer(v, at, 0, maxConcurrentCalls)
		case "queueLength":
			c.QueueLength, err = p.integer(v, at, 0, maxQueueLength)
		case "queueTimeout":
			c.QueueTimeout, err = p.duration(v, at)
		case "maxCallsPerHost":
			c.MaxCallsPerHost, err = p.integer(v, at, 0, maxCallsPerHost)
		case "idleStop":
			c.IdleStop, err = p.idleStop(v, at)
		case "inputTimeout":
			c.InputTimeout, err = p.duration(v, at)
		case "codeMode":
			c.CodeMode, err = p.boolean(v, at)
		case "toolNames":
			err = p.toolNames(v, at, &c.ToolNames)
		case "http":
			err = p.hostHTTP(v, at, &c.HTTP)
		case "hosts":
			c.Hosts, err = p.hosts(v, at)
		case "jobs":
			err = p.jobs(v, at, &c.Jobs)
		case "traces":
			err = p.traces(v, at, &c.Traces)
		case "store":
			c.Store, err = p.store(v, at)
		}
		if err != nil {
			return err
		}
	}
	return nil
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

func (p *parser) jobs(n *node, at path, j *Jobs) error {
	f, err := p.object(n, at, []string{"retention", "maxResultBytes", "leaseTerm"})
	if err != nil {
		return err
	}
	if v, ok := f["retention"]; ok {
		if j.Retention, err = p.duration(v, at.key("retention")); err != nil {
			return err
		}
		if j.Retention <= 0 {
			return p.errorf(v.off, at.key("retention"), "must be longer than 0s")
		}
	}
	if v, ok := f["leaseTerm"]; ok {
		if j.LeaseTerm, err = p.duration(v, at.key("leaseTerm")); err != nil {
			return err
		}
		if j.LeaseTerm < time.Second {
			return p.errorf(v.off, at.key("leaseTerm"), "must be at least 1s")
		}
	}
	if v, ok := f["maxResultBytes"]; ok {
		if j.MaxResultBytes, err = p.integer(v, at.key("maxResultBytes"), 1024, 1<<30); err != nil {
			return err
		}
	}
	return nil
}
