package config

import "time"

// settings reads the "mcpx" block into c, over the defaults already there.
func (p *parser) settings(n *node, at path, c *Config) error {
	if _, err := p.object(n, at, []string{"idleTimeout", "maxTimeout", "startupTimeout", "probeTimeout",
		"toolNames", "maxMessageBytes", "daemonIdleExit", "maxConcurrentCalls", "queueLength", "queueTimeout",
		"maxCallsPerHost", "idleStop", "inputTimeout", "http", "hosts", "traces", "codeMode", "jobs", "store", "oauth", "auth", "audit"}); err != nil {
		return err
	}
	set := map[string]setter{
		"probeTimeout": into(&c.ProbeTimeout, (*parser).duration), "daemonIdleExit": into(&c.DaemonIdleExit, (*parser).duration),
		"inputTimeout": into(&c.InputTimeout, (*parser).duration), "maxCallsPerHost": into(&c.MaxCallsPerHost, intIn(0, maxCallsPerHost)),
		"maxMessageBytes": into(&c.MaxMessageBytes, intIn(minMessageBytes, maxMessageBytes)),
		"codeMode":        into(&c.CodeMode, (*parser).boolean),
		"jobs":            func(p *parser, v *node, at path) error { return p.jobs(v, at, &c.Jobs) },
		"store":           into(&c.Store, (*parser).store),
		"oauth":           func(p *parser, v *node, at path) error { return p.signInKey(v, at, &c.SignInKey) },
		"auth":            func(p *parser, v *node, at path) error { return p.auth(v, at, &c.Auth) },
		"toolNames":       func(p *parser, v *node, at path) error { return p.toolNames(v, at, &c.ToolNames) },
		"http":            func(p *parser, v *node, at path) error { return p.hostHTTP(v, at, &c.HTTP) },
		"hosts":           into(&c.Hosts, (*parser).hosts),
		"traces":          func(p *parser, v *node, at path) error { return p.traces(v, at, &c.Traces) },
		"audit":           func(p *parser, v *node, at path) error { return p.audit(v, at, &c.Audit) },
	}
	c.inheritedFields().add(set)
	return p.members(n, at, set)
}

// setter parses one member's value into its field.
type setter func(p *parser, n *node, at path) error

// into is the setter that parses with parse into field.
func into[T any](field *T, parse func(p *parser, n *node, at path) (T, error)) setter {
	return func(p *parser, n *node, at path) (err error) {
		*field, err = parse(p, n, at)
		return err
	}
}

// intIn parses an integer from lo to hi.
func intIn(lo, hi int) func(p *parser, n *node, at path) (int, error) {
	return func(p *parser, n *node, at path) (int, error) { return p.integer(n, at, lo, hi) }
}

// members parses each member of object n that set names, in order; the
// first error ends it.
func (p *parser) members(n *node, at path, set map[string]setter) error {
	for _, m := range n.members {
		if f, ok := set[m.key]; ok {
			if err := f(p, m.val, at.key(m.key)); err != nil {
				return err
			}
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

// add puts the setters of the inherited settings in set.
func (f inheritedFields) add(set map[string]setter) {
	dur := (*parser).duration
	set["idleTimeout"], set["maxTimeout"] = into(f.idleTimeout, dur), into(f.maxTimeout, dur)
	set["startupTimeout"], set["queueTimeout"] = into(f.startupTimeout, dur), into(f.queueTimeout, dur)
	set["idleStop"] = into(f.idleStop, (*parser).idleStop)
	set["maxConcurrentCalls"] = into(f.maxConcurrentCalls, intIn(0, maxConcurrentCalls))
	set["queueLength"] = into(f.queueLength, intIn(0, maxQueueLength))
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
	f, err := p.object(n, at, []string{"retention", "maxResultBytes", "leaseTerm", "taskMaxTtl", "taskPollInterval", "taskAfter"})
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
	if v, ok := f["taskAfter"]; ok {
		if j.TaskAfter, err = p.duration(v, at.key("taskAfter")); err != nil {
			return err
		}
	}
	for key, d := range map[string]*time.Duration{"taskMaxTtl": &j.TaskMaxTTL, "taskPollInterval": &j.TaskPollInterval} {
		v, ok := f[key]
		if !ok {
			continue
		}
		if *d, err = p.duration(v, at.key(key)); err != nil {
			return err
		}
		if *d < time.Millisecond {
			return p.errorf(v.off, at.key(key), "must be at least 1ms")
		}
	}
	return nil
}
