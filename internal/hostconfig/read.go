package hostconfig

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// ReadOptions adjust [Read].
type ReadOptions struct {
	// Separator is mcpx's tool name separator, which no server name may
	// hold; "" means the default "__".
	Separator string
	// Home is the user's home folder: a Cursor file in Home/.cursor is
	// the user's, one in another folder's .cursor is that project's.
	Home string
}

// Read reads the servers of data, the contents of the host's file named
// file. A file it cannot read as the host would fails; a server it cannot
// take is an entry with Skipped set.
func Read(h *Host, file string, data []byte, opts ReadOptions) (*Import, error) {
	if opts.Separator == "" {
		opts.Separator = "__"
	}
	im := &Import{Host: h.Name, File: file, sep: opts.Separator}
	var err error
	if h.TOML {
		err = readCodex(data, im)
	} else {
		err = readJSONHost(h, file, data, opts, im)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	for i := range im.Vars {
		slices.Sort(im.Vars[i].Servers)
	}
	slices.SortFunc(im.Vars, func(a, b Var) int { return strings.Compare(a.Name, b.Name) })
	return im, nil
}

func readJSONHost(h *Host, file string, data []byte, opts ReadOptions, im *Import) error {
	d, err := readDoc(data)
	if err != nil {
		return err
	}
	if d.root.kind != '{' {
		return fmt.Errorf("the file must hold a JSON object")
	}
	dir := filepath.Dir(file)
	c := substCtx{}
	scope := "user"
	switch h.Name {
	case "claude-code":
		if filepath.Base(file) == ".mcp.json" {
			scope, c.project = "project", dir
		}
		if err := readKey(d, d.root, h.Key, scope, h, im, c); err != nil {
			return err
		}
		projects, _ := d.root.get("projects")
		if projects == nil || projects.kind != '{' {
			return nil
		}
		for _, p := range projects.members {
			if p.val.kind != '{' {
				continue
			}
			if err := readKey(d, p.val, h.Key, "local "+p.key, h, im, substCtx{project: p.key}); err != nil {
				return err
			}
		}
		return nil
	case "vscode":
		if filepath.Base(dir) == ".vscode" {
			scope, c.project = "project", filepath.Dir(dir)
		}
		holder := d.root
		if _, n := d.root.get("servers"); n == 0 {
			if mcp, _ := d.root.get("mcp"); mcp != nil && mcp.kind == '{' {
				holder = mcp // settings.json: "mcp": {"servers": …, "inputs": …}
			}
		}
		if c.inputs, err = readInputs(d, holder); err != nil {
			return err
		}
		return readKey(d, holder, h.Key, scope, h, im, c)
	case "cursor", "windsurf", "gemini":
		if base := filepath.Base(dir); (base == ".cursor" || base == ".gemini") && filepath.Dir(dir) != opts.Home {
			scope, c.project = "project", filepath.Dir(dir)
		}
	case "opencode":
		if !strings.HasPrefix(dir, filepath.Join(opts.Home, ".config")) && opts.Home != "" && filepath.Base(dir) != "opencode" {
			scope, c.project = "project", dir
		}
	}
	return readKey(d, d.root, h.Key, scope, h, im, c)
}

// readKey reads the server list holder[key], if there is one.
func readKey(d *doc, holder *node, key, scope string, h *Host, im *Import, c substCtx) error {
	n, count := holder.get(key)
	switch {
	case count == 0:
		return nil
	case count > 1:
		return fmt.Errorf("%q appears %d times", key, count)
	}
	return readServers(d, n, scope, h, im, c)
}

// vscodeInput is one of VS Code's inputs: a value it asks the user for.
type vscodeInput struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

func readInputs(d *doc, holder *node) (map[string]vscodeInput, error) {
	n, _ := holder.get("inputs")
	out := map[string]vscodeInput{}
	if n == nil {
		return out, nil
	}
	var list []vscodeInput
	if err := d.decode(n, &list); err != nil {
		return nil, fmt.Errorf("inputs: want an array of inputs: %v", err)
	}
	for _, in := range list {
		out[in.ID] = in
	}
	return out, nil
}
