package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Target is how a host reaches mcpx: a command on stdio, or a URL with
// headers (the HTTP face and its bearer token).
type Target struct {
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Startup is how long mcpx may take to answer the host's first
	// initialize and tools/list, for a host whose file sets its own
	// timer for that (Codex's startup_timeout_sec, 10 s when unset);
	// 0 leaves the host's default.
	Startup time.Duration
}

// obj is a JSON object that keeps its members' order.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(f.k) + ":")
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Entry returns the server entry that points h at t, in h's own form.
func (h *Host) Entry(t Target) (json.RawMessage, error) {
	stdio := t.URL == ""
	if !stdio && !h.HTTP {
		return nil, fmt.Errorf("%s's file names local servers only: install it on stdio", h.Title)
	}
	var o obj
	add := func(k string, v any, keep bool) {
		if keep {
			o = append(o, kv{k, v})
		}
	}
	switch {
	case h.Name == "opencode" && stdio:
		add("type", "local", true)
		add("command", append([]string{t.Command}, t.Args...), true)
		add("environment", t.Env, len(t.Env) > 0)
		add("enabled", true, true)
	case h.Name == "opencode":
		add("type", "remote", true)
		add("url", t.URL, true)
		add("headers", t.Headers, len(t.Headers) > 0)
		add("enabled", true, true)
		// opencode tries OAuth on a remote server that answers 401;
		// mcpx's face wants the bearer token it is given.
		add("oauth", false, true)
	case stdio:
		add("type", "stdio", h.Name == "claude-code" || h.Name == "vscode")
		add("command", t.Command, true)
		add("args", t.Args, len(t.Args) > 0)
		add("env", t.Env, len(t.Env) > 0)
		add("required", true, h.Name == "codex" && t.Startup > 0)
		add("startup_timeout_sec", seconds(t.Startup), h.Name == "codex" && t.Startup > 0)
	default:
		add("type", "http", h.Name == "claude-code" || h.Name == "vscode")
		switch h.Name {
		case "gemini":
			add("httpUrl", t.URL, true)
		case "windsurf":
			add("serverUrl", t.URL, true)
		case "codex":
			add("url", t.URL, true)
			add("http_headers", t.Headers, len(t.Headers) > 0)
			add("required", true, t.Startup > 0)
			add("startup_timeout_sec", seconds(t.Startup), t.Startup > 0)
			return json.Marshal(o)
		default:
			add("url", t.URL, true)
		}
		add("headers", t.Headers, len(t.Headers) > 0)
	}
	return json.Marshal(o)
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

// Edit returns data, the host's file, with the server list changed: each
// of set added or replaced, each of remove deleted.
func (h *Host) Edit(data []byte, set []Member, remove []string) ([]byte, error) {
	if h.TOML {
		return EditTOML(data, set, remove)
	}
	return EditJSON(data, h.Key, set, remove)
}

// Servers returns the raw entries of the host's server list, by name:
// what Edit would keep or remove. For the check of whether a file points
// at mcpx.
func (h *Host) Servers(data []byte) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	if h.TOML {
		var doc map[string]any
		if err := tomlUnmarshal(data, &doc); err != nil {
			return nil, err
		}
		list, _ := doc["mcp_servers"].(map[string]any)
		for k, v := range list {
			out[k], _ = json.Marshal(v)
		}
		return out, nil
	}
	d, list, err := serverList(data, h.Key)
	if err != nil {
		return nil, err
	}
	if list == nil {
		return out, nil
	}
	for _, m := range list.members {
		out[m.key] = bytes.Clone(d.clean[m.val.start:m.val.end])
	}
	return out, nil
}
