package catalog

import (
	"context"
	"encoding/json"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// Prompt is one exposed prompt.
type Prompt struct {
	Name   string // exposed
	Server string
	Prompt string // the upstream's name
}

// Prompts is every upstream's prompts at one moment, named like tools:
// server + separator + name, or the bare name where the naming allows it
// and no other server has a prompt of that name.
type Prompts struct {
	*Pages
	byName map[string]Prompt
}

// Lookup returns the prompt exposed under name.
func (p *Prompts) Lookup(name string) (Prompt, bool) {
	pr, ok := p.byName[name]
	return pr, ok
}

// Prompts lists the prompts of every server visible reports true for
// (nil: every server); the others' prompts take no part in the naming.
func (c *Catalog) Prompts(ctx context.Context, visible func(server string) bool) *Prompts {
	ls := c.listAll(ctx, upstream.ListPrompts, visible)
	count := map[string]int{}
	for _, l := range ls {
		for _, pg := range l.pages {
			for _, it := range pg.Items {
				if n := itemString(it, "name"); n != "" {
					count[n]++
				}
			}
		}
	}
	out := &Prompts{byName: map[string]Prompt{}}
	out.Pages = c.merge(ls, "prompt", func(server string, item []byte) []byte {
		n := itemString(item, "name")
		if n == "" {
			return nil // a prompt mcpx cannot name is one it cannot route
		}
		name := c.exposedName(server, n, count[n] > 1)
		if _, taken := out.byName[name]; taken {
			c.log.Warn("two prompts share an exposed name; keeping the first", "name", name, "server", server)
			return nil
		}
		out.byName[name] = Prompt{Name: name, Server: server, Prompt: n}
		return renamed(item, name)
	})
	return out
}

// ResolvePrompt finds the server and upstream prompt behind an exposed
// name. Listings are cached, so the listing decides: a name no upstream
// lists is unknown, even with a server's prefix, unless that server could
// not be listed (the request then goes there and says why). Only the
// servers visible reports true for (nil: all) are looked at.
func (c *Catalog) ResolvePrompt(ctx context.Context, name string, visible func(server string) bool) (server, prompt string, ok bool) {
	snap := c.Prompts(ctx, visible)
	if p, ok := snap.Lookup(name); ok {
		return p.Server, p.Prompt, true
	}
	if server, prompt, ok := c.Route(name); ok && (visible == nil || visible(server)) {
		if _, failed := snap.Errors[server]; failed {
			return server, prompt, true
		}
	}
	return "", "", false
}

// itemString returns a string member of a list item, "" if absent.
func itemString(item []byte, key string) string {
	obj, err := jsonrpc.ParseObject(item)
	if err != nil {
		return ""
	}
	raw, ok := obj.Get(key)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
