package config

import (
	"net/url"
	"slices"
	"strings"
)

// Auth makes mcpx's HTTP face an OAuth 2.1 protected resource (the
// "mcpx.auth" block): people sign in at the organisation's authorization
// server and present its access tokens; each is a principal of their
// own, and their groups select what they may do. Named tokens and the
// default token keep working beside it. Its zero value (Enabled false)
// means no sign-in: bearer tokens alone.
type Auth struct {
	// Issuers are the authorization servers whose tokens are taken, by
	// their issuer identifiers (absolute https URLs, http for loopback
	// alone); their metadata names their keys.
	Issuers []string
	// Audience is mcpx's resource URL (its MCP endpoint, e.g.
	// "https://mcpx.example.com/mcp"): a token's aud must name it.
	Audience string
	// Scopes are the scopes a token must carry, every one of them.
	Scopes []string
	// NameClaim names the claim holding a person's readable name
	// (default "name"); GroupsClaim the one holding their groups
	// (default "groups"; an array of strings, or one string).
	NameClaim, GroupsClaim string
	// Introspection, if its URL is set, checks tokens that are not JWTs
	// (opaque tokens) at the authorization server (RFC 7662).
	Introspection Introspection
	// Groups are the policies of groups, by group name; nil when the
	// block names none, and then every signed-in person may call every
	// tool. With groups named, a person is allowed what any of their
	// groups allows, and nothing if none of them is named here.
	Groups map[string]*Group
}

// Enabled reports whether a names an authorization server.
func (a Auth) Enabled() bool { return len(a.Issuers) > 0 }

// Introspection is where and as whom mcpx asks an authorization server
// about an opaque token.
type Introspection struct {
	URL          string
	ClientID     string
	ClientSecret string
}

// Group is what the members of one group may do.
type Group struct {
	// Tools limits the tools the group's members see and may call (the
	// pattern syntax of [ToolFilter]); nil: every tool.
	Tools *ToolFilter
	// Admin: the group's members may do what the local user may: read
	// and cancel every principal's jobs and calls, read the whole
	// status, operate the daemon.
	Admin bool
	// Background (default true): the group's members may start jobs and
	// tasks. A person is allowed if one of their groups allows it (or
	// is an admin group); refused, a job asked for is refused, and a
	// call that would become one past its host's timer stays a plain
	// call (config.Config.GroupBackground).
	Background bool
}

// Default claims.
const (
	DefaultNameClaim   = "name"
	DefaultGroupsClaim = "groups"
)

// auth reads the "mcpx.auth" block.
func (p *parser) auth(n *node, at path, a *Auth) error {
	f, err := p.object(n, at, []string{"issuers", "audience", "scopes", "nameClaim", "groupsClaim", "introspection", "groups"})
	if err != nil {
		return err
	}
	a.NameClaim, a.GroupsClaim = DefaultNameClaim, DefaultGroupsClaim
	v, ok := f["issuers"]
	if !ok {
		return p.errorf(n.off, at.key("issuers"), "is required: the issuer URL of each authorization server whose tokens mcpx takes")
	}
	if a.Issuers, err = p.args(v, at.key("issuers")); err != nil {
		return err
	}
	if len(a.Issuers) == 0 {
		return p.errorf(v.off, at.key("issuers"), "must name at least one issuer")
	}
	for i, iss := range a.Issuers {
		if why := authURL(iss, "an issuer"); why != "" {
			return p.errorf(v.elems[i].off, at.key("issuers").index(i), "%s", why)
		}
	}
	if v, ok = f["audience"]; !ok {
		return p.errorf(n.off, at.key("audience"), "is required: mcpx's resource URL, its MCP endpoint as hosts reach it (e.g. \"https://mcpx.example.com/mcp\")")
	}
	if a.Audience, err = p.expanded(v, at.key("audience")); err != nil {
		return err
	}
	if why := authURL(a.Audience, "mcpx's resource URL"); why != "" {
		return p.errorf(v.off, at.key("audience"), "%s", why)
	}
	if v, ok := f["scopes"]; ok {
		if a.Scopes, err = p.args(v, at.key("scopes")); err != nil {
			return err
		}
		for i, s := range a.Scopes {
			if s == "" || strings.ContainsAny(s, " \t\"\\") {
				return p.errorf(v.elems[i].off, at.key("scopes").index(i), "must be a scope: no space, quote or backslash")
			}
		}
	}
	for key, dst := range map[string]*string{"nameClaim": &a.NameClaim, "groupsClaim": &a.GroupsClaim} {
		if v, ok := f[key]; ok {
			if *dst, err = p.str(v, at.key(key)); err != nil {
				return err
			}
			if *dst == "" {
				return p.errorf(v.off, at.key(key), "must name a claim")
			}
		}
	}
	if v, ok := f["introspection"]; ok {
		if err := p.introspection(v, at.key("introspection"), &a.Introspection); err != nil {
			return err
		}
	}
	if v, ok := f["groups"]; ok {
		if a.Groups, err = p.groups(v, at.key("groups")); err != nil {
			return err
		}
	}
	return nil
}

// authURL says what is wrong with u as what (an issuer, the audience,
// an endpoint), "" if nothing: an absolute https URL, http for a
// loopback host alone, no query or fragment.
func authURL(u, what string) string {
	x, err := url.Parse(u)
	if err != nil || x.Host == "" || (x.Scheme != "https" && x.Scheme != "http") {
		return "must be " + what + ": an absolute https URL"
	}
	if x.Scheme == "http" && !loopbackHost(x.Hostname()) {
		return "must be an https URL (http only for localhost or a loopback address)"
	}
	if x.RawQuery != "" || x.Fragment != "" || x.User != nil {
		return "must be " + what + " with no query, fragment or user"
	}
	return ""
}

func loopbackHost(h string) bool {
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

func (p *parser) introspection(n *node, at path, in *Introspection) error {
	f, err := p.object(n, at, []string{"url", "clientId", "clientSecret"})
	if err != nil {
		return err
	}
	for _, key := range []string{"url", "clientId", "clientSecret"} {
		if _, ok := f[key]; !ok {
			return p.errorf(n.off, at.key(key), "is required")
		}
	}
	if in.URL, err = p.expanded(f["url"], at.key("url")); err != nil {
		return err
	}
	if why := authURL(in.URL, "the introspection endpoint"); why != "" {
		return p.errorf(f["url"].off, at.key("url"), "%s", why)
	}
	if in.ClientID, err = p.expanded(f["clientId"], at.key("clientId")); err != nil {
		return err
	}
	if in.ClientSecret, err = p.expanded(f["clientSecret"], at.key("clientSecret")); err != nil {
		return err
	}
	if in.ClientID == "" || in.ClientSecret == "" {
		return p.errorf(n.off, at, "clientId and clientSecret must not be empty")
	}
	return nil
}

// groups reads "mcpx.auth.groups": an object keyed by group name.
func (p *parser) groups(n *node, at path) (map[string]*Group, error) {
	if _, err := p.object(n, at, nil); err != nil {
		return nil, err
	}
	out := make(map[string]*Group, len(n.members))
	for _, m := range n.members {
		at := at.key(m.key)
		if m.key == "" {
			return nil, p.errorf(m.off, at, "must name a group as the groups claim does")
		}
		f, err := p.object(m.val, at, []string{"tools", "admin", "background"})
		if err != nil {
			return nil, err
		}
		g := &Group{Background: true}
		if v, ok := f["tools"]; ok {
			if g.Tools, err = p.toolFilter(v, at.key("tools")); err != nil {
				return nil, err
			}
		}
		if v, ok := f["admin"]; ok {
			if g.Admin, err = p.boolean(v, at.key("admin")); err != nil {
				return nil, err
			}
		}
		if v, ok := f["background"]; ok {
			if g.Background, err = p.boolean(v, at.key("background")); err != nil {
				return nil, err
			}
		}
		out[m.key] = g
	}
	return out, nil
}

// GroupBackground reports whether a person in groups may start jobs and
// tasks: yes if mcpx.auth names no groups, else if one of theirs that it
// names allows background.
func (c *Config) GroupBackground(groups []string) bool {
	if c.Auth.Groups == nil {
		return true
	}
	for _, g := range groups {
		if pol := c.Auth.Groups[g]; pol != nil && pol.Background {
			return true
		}
	}
	return false
}

// GroupTools returns the tool filter of a person in groups, and whether
// one of the groups is an admin group: nil (every tool) if mcpx.auth
// names no groups, or if one of theirs allows every tool; a filter that
// refuses every tool if none of theirs is named; else the filter of their
// one group, or the union of their groups' filters (a tool one allows is
// allowed).
func (c *Config) GroupTools(groups []string) (f *ToolFilter, admin bool) {
	if c.Auth.Groups == nil {
		return nil, false
	}
	var fs []*ToolFilter
	all := false
	for _, g := range groups {
		pol := c.Auth.Groups[g]
		if pol == nil {
			continue
		}
		admin = admin || pol.Admin
		if pol.Tools == nil {
			all = true
		} else if !slices.Contains(fs, pol.Tools) {
			fs = append(fs, pol.Tools)
		}
	}
	switch {
	case all:
		return nil, admin
	case len(fs) == 0:
		return &ToolFilter{Patterns: []string{"!*"}, Path: "mcpx.auth.groups (none of the person's groups is named there)"}, admin
	case len(fs) == 1:
		return fs[0], admin
	}
	u := &ToolFilter{anyOf: fs}
	paths := make([]string, len(fs))
	for i, f := range fs {
		u.Patterns = append(u.Patterns, f.Patterns...)
		paths[i] = f.Path
	}
	slices.Sort(paths)
	u.Path = strings.Join(paths, " + ")
	return u, admin
}

// anyAllows is Allows of a union: the first of its filters that allows
// name decides; if none does, why names them all.
func (f *ToolFilter) anyAllows(name string) (bool, string) {
	var whys []string
	for _, g := range f.anyOf {
		ok, why := g.Allows(name)
		if ok {
			return true, why
		}
		whys = append(whys, why)
	}
	return false, "no group allows it (" + strings.Join(whys, "; ") + ")"
}
