package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// ExposedScheme starts the URIs mcpx makes for resources whose own URI
// (or template) more than one upstream exposes: mcpx://<server>/<the
// upstream's URI, verbatim>. Hosts may use the form for any upstream.
const ExposedScheme = "mcpx://"

// ExposeURI returns the URI of server's resource uri in mcpx's own form.
func ExposeURI(server, uri string) string { return ExposedScheme + server + "/" + uri }

// Errors of resource routing.
var (
	ErrUnknownResource   = errors.New("resource not found")
	ErrAmbiguousResource = errors.New("ambiguous resource")
)

// Resources is every upstream's resources and resource templates at one
// moment. A resource keeps its upstream's URI (and a template its
// uriTemplate) byte for byte, unless another upstream exposes the same
// one: then each of them is exposed as mcpx://<server>/<uri>.
type Resources struct {
	List      *Pages
	Templates *Pages

	servers   []string            // with the resources capability, or unlisted
	byURI     map[string][]string // upstream URI -> servers listing it
	templates []routeTemplate
	byTmpl    map[string][]string // upstream uriTemplate -> servers
	known     map[string]bool     // configured servers
}

type routeTemplate struct {
	server string
	re     *regexp.Regexp
}

// Resources lists the resources and resource templates of every server
// visible reports true for (nil: every server). The others are as if they
// were not configured: not listed, not routed to, not named in an error,
// and no reason for a visible server's URI to take mcpx's form.
func (c *Catalog) Resources(ctx context.Context, visible func(server string) bool) *Resources {
	// One list after the other: each upstream sees its requests in one
	// order (its wire is then the same from run to run), and both are
	// cached after the first time.
	ls := c.listAll(ctx, upstream.ListResources, visible)
	ts := c.listAll(ctx, upstream.ListResourceTemplates, visible)
	r := c.resourcesFrom(ls, ts)
	if visible != nil {
		maps.DeleteFunc(r.known, func(n string, _ bool) bool { return !visible(n) })
	}
	return r
}

// resourcesFrom merges listings of resources (ls) and templates (ts).
func (c *Catalog) resourcesFrom(ls, ts []listed) *Resources {
	r := &Resources{byURI: map[string][]string{}, known: map[string]bool{}}
	for _, n := range c.pool.Names() {
		r.known[n] = true
	}
	withCap := map[string]bool{}
	for _, l := range ls {
		if l.err != nil || len(l.pages) > 0 {
			withCap[l.server] = true
		}
		for _, pg := range l.pages {
			for _, it := range pg.Items {
				if u := itemString(it, "uri"); u != "" && !slices.Contains(r.byURI[u], l.server) {
					r.byURI[u] = append(r.byURI[u], l.server)
				}
			}
		}
	}
	tmplServers := map[string][]string{}
	for _, l := range ts {
		if l.err != nil || len(l.pages) > 0 {
			withCap[l.server] = true
		}
		for _, pg := range l.pages {
			for _, it := range pg.Items {
				if u := itemString(it, "uriTemplate"); u != "" && !slices.Contains(tmplServers[u], l.server) {
					tmplServers[u] = append(tmplServers[u], l.server)
					if re := templatePattern(u); re != nil {
						r.templates = append(r.templates, routeTemplate{server: l.server, re: re})
					}
				}
			}
		}
	}
	for s := range withCap {
		r.servers = append(r.servers, s)
	}
	sort.Strings(r.servers)
	r.byTmpl = tmplServers
	r.List = c.merge(ls, "resource", func(server string, item []byte) []byte {
		return exposeMember(item, "uri", server, len(r.byURI[itemString(item, "uri")]) > 1)
	})
	r.Templates = c.merge(ts, "resource template", func(server string, item []byte) []byte {
		return exposeMember(item, "uriTemplate", server, len(tmplServers[itemString(item, "uriTemplate")]) > 1)
	})
	return r
}

// exposeMember rewrites item's member key to mcpx's form when it collides.
func exposeMember(item []byte, key, server string, collides bool) []byte {
	v := itemString(item, key)
	if v == "" {
		return nil // a resource mcpx cannot name is one it cannot route
	}
	if !collides {
		return item
	}
	obj, err := jsonrpc.ParseObject(item)
	if err != nil {
		return nil
	}
	obj.Set(key, jsonrpc.MustMarshal(ExposeURI(server, v)))
	return obj.Bytes()
}

// Route finds the upstream of a URI a host names: mcpx's own form names
// it; else the one upstream that lists the URI; else the one whose
// resource templates match it; else the only upstream serving resources.
// It returns the upstream's URI, and whether the host used mcpx's form.
func (r *Resources) Route(uri string) (server, upstreamURI string, exposed bool, err error) {
	if rest, ok := strings.CutPrefix(uri, ExposedScheme); ok {
		server, up, found := strings.Cut(rest, "/")
		if !found || !r.known[server] || up == "" {
			return "", "", false, fmt.Errorf("%w: %s names no configured server (the form is %s<server>/<uri>)", ErrUnknownResource, uri, ExposedScheme)
		}
		return server, up, true, nil
	}
	switch s := r.byURI[uri]; len(s) {
	case 1:
		return s[0], uri, false, nil
	case 0:
	default:
		return "", "", false, r.ambiguous(uri, s)
	}
	var matched []string
	for _, t := range r.templates {
		if t.re.MatchString(uri) && !slices.Contains(matched, t.server) {
			matched = append(matched, t.server)
		}
	}
	switch len(matched) {
	case 1:
		return matched[0], uri, false, nil
	case 0:
	default:
		return "", "", false, r.ambiguous(uri, matched)
	}
	if len(r.servers) == 1 {
		return r.servers[0], uri, false, nil
	}
	return "", "", false, fmt.Errorf("%w: %s (no upstream lists it or has a template that matches it)", ErrUnknownResource, uri)
}

// RouteRef finds the upstream of a completion's ref/resource, whose uri
// may be a resource template as listed (or a URI): mcpx's form, or the one
// upstream with that template, or as Route finds it.
func (r *Resources) RouteRef(uri string) (server, upstreamURI string, err error) {
	if !strings.HasPrefix(uri, ExposedScheme) {
		switch s := r.byTmpl[uri]; len(s) {
		case 1:
			return s[0], uri, nil
		case 0:
		default:
			return "", "", r.ambiguous(uri, s)
		}
	}
	server, upstreamURI, _, err = r.Route(uri)
	return server, upstreamURI, err
}

func (r *Resources) ambiguous(uri string, servers []string) error {
	var forms []string
	for _, s := range servers {
		forms = append(forms, ExposeURI(s, uri))
	}
	return fmt.Errorf("%w: %s is served by %s; name one: %s", ErrAmbiguousResource, uri, strings.Join(servers, ", "), strings.Join(forms, " or "))
}
