package hostconfig

import (
	"fmt"
)

// readServers reads the servers of object n (name -> server) into im.
func readServers(d *doc, n *node, scope string, h *Host, im *Import, c substCtx) error {
	if n.kind != '{' {
		return fmt.Errorf("%s: the server list must be a JSON object", lineCol(d.orig, n.start))
	}
	for _, m := range n.members {
		if _, count := n.get(m.key); count > 1 {
			return fmt.Errorf("%s: server %q appears %d times", lineCol(d.orig, m.keyStart), m.key, count)
		}
	}
	for _, m := range n.members {
		im.Entries = append(im.Entries, Entry{From: m.key, Name: im.name(m.key), Scope: scope})
		e := &im.Entries[len(im.Entries)-1]
		r := &sreader{outcome: outcome{e: e, s: &Server{}}, d: d, ctx: c, subst: h.subst, host: h.Title}
		r.ctx.im, r.ctx.entry = im, e
		if m.val.kind != '{' {
			r.fail(skipf("want a JSON object"))
		} else {
			h.server(r, m.val)
		}
		r.finish()
	}
	return nil
}

// common reads the fields most hosts share: command, args, env, url,
// headers. It reports whether it took m.
func (r *sreader) common(m member) bool {
	switch m.key {
	case "command":
		r.s.Command, _ = r.str(m)
	case "args":
		r.s.Args, _ = r.strs(m)
	case "env":
		r.s.Env, _ = r.strMap(m)
	case "url":
		r.s.URL, _ = r.str(m)
	case "headers":
		r.s.Headers, _ = r.strMap(m)
	default:
		return false
	}
	return true
}

// typ reads a "type" of stdio, http or sse (Claude Code, VS Code, Cursor).
func (r *sreader) typ(m member) {
	r.took(m.key)
	var t string
	if err := r.d.decode(m.val, &t); err != nil {
		r.fail(skipf("type: want a string"))
		return
	}
	switch t {
	case "stdio", "http":
	case "streamable-http", "streamableHttp":
		t = "http"
	case "sse":
		r.s.Type = "sse"
	default:
		r.fail(skipf("type %q: mcpx knows stdio, http and sse", t))
	}
}

// members reads each member of a server's object n: a field in skips is
// noted as skipped with its reason; own (nil for none) comes next and
// reports whether it took the member; then the fields most hosts share.
// A member none of them takes is one the host does not document.
func (r *sreader) members(n *node, skips map[string]string, own func(m member) bool) {
	for _, m := range n.members {
		if why, ok := skips[m.key]; ok {
			r.skip(m, why)
			continue
		}
		if (own == nil || !own(m)) && !r.common(m) {
			r.unknown(m)
		}
	}
}

// typeField takes a "type" (see typ).
func (r *sreader) typeField(m member) bool {
	if m.key != "type" {
		return false
	}
	r.typ(m)
	return true
}

// Why some hosts' fields are skipped.
const (
	envFileSkip  = "mcpx reads no env files; put the variables in env, or in mcpx's environment"
	toolListSkip = "per-server tool lists are not in mcpx's server entries; use mcpx.hosts tool filters"
)

var claudeDesktopSkips = map[string]string{
	"url":     "Claude Desktop's file runs local servers only (remote ones are connectors in its settings)",
	"headers": "Claude Desktop's file runs local servers only (remote ones are connectors in its settings)",
}

func claudeDesktopServer(r *sreader, n *node) { r.members(n, claudeDesktopSkips, nil) }

var claudeCodeSkips = map[string]string{
	"oauth": oauthSkip,
}

func claudeCodeServer(r *sreader, n *node) {
	r.members(n, claudeCodeSkips, func(m member) bool {
		switch m.key {
		case "type":
			r.typ(m)
		case "timeout":
			if d, ok := r.millis(m); ok {
				r.s.MaxTimeout = d
				r.e.notef("timeout: became maxTimeout %s (a hard limit on each call, as in Claude Code)", d)
			}
		case "headersHelper":
			r.skip(m, "mcpx does not run a command for headers; put the header in headers with a ${VAR}")
			r.fail(skipf("it gets its headers from a headersHelper command, which mcpx does not run"))
		default:
			return false
		}
		return true
	})
}

var cursorSkips = map[string]string{
	"envFile": envFileSkip,
	"auth":    oauthSkip,
}

func cursorServer(r *sreader, n *node) { r.members(n, cursorSkips, r.typeField) }

var vscodeSkips = map[string]string{
	"envFile":        envFileSkip,
	"dev":            "VS Code's development mode (watch and debug) has no counterpart in mcpx",
	"sandboxEnabled": "mcpx does not sandbox upstream servers",
	"sandbox":        "mcpx does not sandbox upstream servers",
}

func vscodeServer(r *sreader, n *node) {
	r.members(n, vscodeSkips, func(m member) bool {
		if m.key == "cwd" {
			r.s.Cwd, _ = r.str(m)
			return true
		}
		return r.typeField(m)
	})
}

var windsurfSkips = map[string]string{
	"url":           "Windsurf reads a remote server's address from serverUrl, not url",
	"disabledTools": toolListSkip,
}

func windsurfServer(r *sreader, n *node) {
	r.members(n, windsurfSkips, func(m member) bool {
		switch m.key {
		case "serverUrl":
			r.s.URL, _ = r.str(m)
			return true
		case "disabled":
			r.s.Disabled, _ = r.boolean(m)
			return true
		}
		return false
	})
}

var geminiSkips = map[string]string{
	"trust":                "whether to confirm a call is the host's choice; mcpx does not ask",
	"includeTools":         toolListSkip,
	"excludeTools":         toolListSkip,
	"description":          "mcpx's server entries have no description",
	"oauth":                geminiAuthSkip,
	"authProviderType":     geminiAuthSkip,
	"targetAudience":       geminiAuthSkip,
	"targetServiceAccount": geminiAuthSkip,
}

const geminiAuthSkip = oauthSkip + "; Google credentials are not mcpx's either"

func geminiServer(r *sreader, n *node) {
	// A url is legacy SSE unless a type says otherwise (Gemini CLI's own
	// "mcp add -t http" writes url with type http); httpUrl is
	// Streamable HTTP.
	var urlKeys []string
	typed := ""
	r.members(n, geminiSkips, func(m member) bool {
		switch m.key {
		case "url", "httpUrl":
			r.s.URL, _ = r.str(m)
			urlKeys = append(urlKeys, m.key)
		case "type":
			r.typ(m)
			_ = r.d.decode(m.val, &typed)
		case "cwd":
			r.s.Cwd, _ = r.str(m)
		case "timeout":
			if d, ok := r.millis(m); ok {
				r.s.MaxTimeout = d
				r.e.notef("timeout: became maxTimeout %s (Gemini CLI's timer is hard)", d)
			}
		default:
			return false
		}
		return true
	})
	switch {
	case len(urlKeys) > 1:
		r.fail(skipf("it has both url and httpUrl"))
	case typed == "" && len(urlKeys) == 1 && urlKeys[0] == "url":
		r.s.Type = "sse"
	}
}

func opencodeServer(r *sreader, n *node) {
	kind := ""
	if t, _ := n.get("type"); t != nil {
		_ = r.d.decode(t, &kind)
	}
	switch kind {
	case "local", "remote":
	default:
		r.fail(skipf("type %q: opencode knows local and remote", kind))
		return
	}
	for _, m := range n.members {
		switch {
		case m.key == "type":
			r.took(m.key)
		case m.key == "command" && kind == "local":
			if argv, ok := r.strs(m); ok {
				if len(argv) == 0 {
					r.fail(skipf("command: the array is empty"))
				} else {
					r.s.Command, r.s.Args = argv[0], argv[1:]
					if len(r.s.Args) == 0 {
						r.s.Args = nil
					}
				}
			}
		case m.key == "environment" && kind == "local":
			r.s.Env, _ = r.strMap(m)
		case m.key == "url" && kind == "remote":
			r.s.URL, _ = r.str(m)
		case m.key == "headers" && kind == "remote":
			r.s.Headers, _ = r.strMap(m)
		case m.key == "enabled":
			if on, ok := r.boolean(m); ok {
				r.s.Disabled = !on
			}
		case m.key == "timeout":
			if d, ok := r.millis(m); ok {
				r.s.IdleTimeout = d
				r.e.notef("timeout: became idleTimeout %s (opencode restarts its timer on progress, as mcpx's idle timer does)", d)
			}
		case m.key == "oauth":
			r.skip(m, oauthSkip)
		default:
			if kind == "local" && (m.key == "url" || m.key == "headers") || kind == "remote" && (m.key == "command" || m.key == "environment") {
				r.skip(m, fmt.Sprintf("opencode does not read it for a %s server", kind))
				continue
			}
			r.unknown(m)
		}
	}
}
