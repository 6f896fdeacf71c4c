package hostconfig

import (
	"fmt"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// readCodex reads the [mcp_servers.NAME] tables of Codex's config.toml.
// Codex expands no variables in them; env_vars, bearer_token_env_var
// and env_http_headers name variables it passes on, which become ${VAR}.
func readCodex(data []byte, im *Import) error {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return err
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return nil
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("mcp_servers must be a table")
	}
	for _, name := range sortedKeys(servers) {
		im.Entries = append(im.Entries, Entry{From: name, Name: im.name(name), Scope: "user"})
		e := &im.Entries[len(im.Entries)-1]
		r := &treader{outcome: outcome{e: e, s: &Server{}}, im: im}
		if t, ok := servers[name].(map[string]any); ok {
			r.server(t)
		} else {
			r.fail(skipf("want a table"))
		}
		r.finish()
	}
	return nil
}

// treader reads one Codex server table.
type treader struct {
	outcome
	im *Import
}

func (r *treader) server(t map[string]any) {
	for _, k := range sortedKeys(t) {
		v := t[k]
		if !strings.HasPrefix(k, "enabled_") && !strings.HasPrefix(k, "disabled_") && k != "bearer_token" && !strings.HasPrefix(k, "oauth") && k != "scopes" {
			r.e.Taken = append(r.e.Taken, k) // undone below for a field it does not know
		}
		switch k {
		case "command":
			r.s.Command = literal(r.str(k, v))
		case "args":
			for _, a := range r.strs(k, v) {
				r.s.Args = append(r.s.Args, literal(a))
			}
		case "env":
			for name, val := range r.strMap(k, v) {
				r.s.Env = setKey(r.s.Env, name, literal(val))
			}
		case "env_vars":
			for _, name := range r.strs(k, v) {
				if !envName().MatchString(name) {
					r.fail(skipf("env_vars: %q is not a variable name", name))
					continue
				}
				r.s.Env = setKey(r.s.Env, name, "${"+name+"}")
				r.im.addVar(name, r.e.Name, "Codex passed it on from its environment", false)
			}
			r.e.notef("env_vars: each became env NAME=${NAME}, read from mcpx's environment")
		case "cwd":
			r.s.Cwd = literal(r.str(k, v))
		case "url":
			r.s.URL = literal(r.str(k, v))
		case "http_headers":
			for name, val := range r.strMap(k, v) {
				r.s.Headers = setKey(r.s.Headers, name, literal(val))
			}
		case "env_http_headers":
			for name, envVar := range r.strMap(k, v) {
				r.s.Headers = setKey(r.s.Headers, name, "${"+envVar+"}")
				r.im.addVar(envVar, r.e.Name, "Codex read header "+name+" from it", false)
			}
			r.e.notef("env_http_headers: each became a header with a ${VAR} value")
		case "bearer_token_env_var":
			name := r.str(k, v)
			r.s.Headers = setKey(r.s.Headers, "Authorization", "Bearer ${"+name+"}")
			r.im.addVar(name, r.e.Name, "Codex sent it as the bearer token", true)
			r.e.notef("bearer_token_env_var: became header Authorization: Bearer ${%s}", name)
		case "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec":
			d := r.seconds(k, v)
			if k == "startup_timeout_ms" {
				d /= 1000
			}
			if k == "tool_timeout_sec" {
				r.s.MaxTimeout = durationString(d)
				r.e.notef("tool_timeout_sec: became maxTimeout %s (Codex's timer is hard)", r.s.MaxTimeout)
			} else {
				r.s.StartupTimeout = durationString(d)
			}
		case "enabled":
			b, ok := v.(bool)
			if !ok {
				r.fail(skipf("enabled: want true or false"))
			}
			r.s.Disabled = !b
		case "enabled_tools", "disabled_tools":
			r.e.notef("%s: skipped: per-server tool lists are not in mcpx's server entries; use mcpx.hosts tool filters", k)
		case "bearer_token":
			r.e.notef("bearer_token: skipped: Codex refuses a token written in the file; use bearer_token_env_var")
		case "oauth", "scopes", "oauth_resource":
			r.e.notef("%s: skipped: %s", k, oauthSkip)
		default:
			r.e.Taken = r.e.Taken[:len(r.e.Taken)-1]
			r.e.notef("%s: skipped: not a field Codex documents, so mcpx cannot tell what it means", k)
		}
	}
}

func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func (r *treader) str(k string, v any) string {
	s, ok := v.(string)
	if !ok {
		r.fail(skipf("%s: want a string", k))
	}
	return s
}

func (r *treader) strs(k string, v any) []string {
	list, ok := v.([]any)
	if !ok {
		r.fail(skipf("%s: want an array of strings", k))
		return nil
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			r.fail(skipf("%s: want an array of strings", k))
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (r *treader) strMap(k string, v any) map[string]string {
	t, ok := v.(map[string]any)
	if !ok {
		r.fail(skipf("%s: want a table of strings", k))
		return nil
	}
	out := make(map[string]string, len(t))
	for name, x := range t {
		s, ok := x.(string)
		if !ok {
			r.fail(skipf("%s.%s: want a string", k, name))
			return nil
		}
		out[name] = s
	}
	return out
}

func (r *treader) seconds(k string, v any) time.Duration {
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		r.fail(skipf("%s: want a number", k))
	}
	if f < 0 {
		r.fail(skipf("%s: want a number of at least 0", k))
	}
	return time.Duration(f * float64(time.Second))
}

func (r *treader) finish() {
	r.endpoint("it has neither a command nor a url")
	r.settle()
}
