package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"mcpx/internal/upstream"
)

func pages(items ...string) []upstream.Page {
	var p upstream.Page
	for _, it := range items {
		p.Items = append(p.Items, json.RawMessage(it))
	}
	return []upstream.Page{p}
}

// twoServers: a and b both list demo://shared; each has a template; c
// has neither capability.
func twoServers(t *testing.T) *Resources {
	t.Helper()
	c := newCatalog(t, Naming{}, "a", "b", "c")
	ls := []listed{
		{server: "a", pages: pages(`{"uri":"file:///a.txt","name":"a"}`, `{"uri":"demo://shared","name":"s"}`)},
		{server: "b", pages: pages(`{"name":"s","uri":"demo://shared","x-ext":{"k":1}}`)},
		{server: "c"},
	}
	ts := []listed{
		{server: "a", pages: pages(`{"uriTemplate":"a://items/{id}","name":"item"}`)},
		{server: "b", pages: pages(`{"uriTemplate":"b://{+path}","name":"any"}`, `{"uriTemplate":"q://search{?q,lang}","name":"search"}`)},
	}
	return c.resourcesFrom(ls, ts)
}

func TestResourcesExposeOnlyCollisions(t *testing.T) {
	r := twoServers(t)
	items, next, err := r.List.Page("")
	if err != nil || next == "" || len(items) != 2 {
		t.Fatalf("first page: %d items, next %q, err %v", len(items), next, err)
	}
	if string(items[0]) != `{"uri":"file:///a.txt","name":"a"}` {
		t.Errorf("a unique URI changed: %s", items[0])
	}
	if string(items[1]) != `{"uri":"mcpx://a/demo://shared","name":"s"}` {
		t.Errorf("a colliding URI: %s", items[1])
	}
	items, next, err = r.List.Page(next)
	if err != nil || next != "" || len(items) != 1 || string(items[0]) != `{"name":"s","uri":"mcpx://b/demo://shared","x-ext":{"k":1}}` {
		t.Errorf("second page: %s, next %q, err %v", items, next, err)
	}
}

func TestResourcesRoute(t *testing.T) {
	r := twoServers(t)
	tests := []struct {
		uri, server, upstream string
		exposed               bool
		err                   error
	}{
		{"file:///a.txt", "a", "file:///a.txt", false, nil},
		{"mcpx://b/demo://shared", "b", "demo://shared", true, nil},
		{"mcpx://a/anything:at/all", "a", "anything:at/all", true, nil},
		{"a://items/7", "a", "a://items/7", false, nil},
		{"b://deep/path/x", "b", "b://deep/path/x", false, nil},
		{"q://search", "b", "q://search", false, nil},
		{"q://search?q=x&lang=en", "b", "q://search?q=x&lang=en", false, nil},
		{"a://items/7/more", "", "", false, ErrUnknownResource},
		{"demo://shared", "", "", false, ErrAmbiguousResource},
		{"mcpx://nope/x", "", "", false, ErrUnknownResource},
		{"mcpx://a/", "", "", false, ErrUnknownResource},
		{"zz://unknown", "", "", false, ErrUnknownResource},
	}
	for _, tt := range tests {
		server, up, exposed, err := r.Route(tt.uri)
		if !errors.Is(err, tt.err) || server != tt.server || up != tt.upstream || exposed != tt.exposed {
			t.Errorf("Route(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tt.uri, server, up, exposed, err, tt.server, tt.upstream, tt.exposed, tt.err)
		}
	}
	_, _, _, err := r.Route("demo://shared")
	if err == nil || !strings.Contains(err.Error(), "mcpx://a/demo://shared or mcpx://b/demo://shared") {
		t.Errorf("the ambiguous error does not name both forms: %v", err)
	}
}

func TestResourcesRouteToTheOnlyServer(t *testing.T) {
	c := newCatalog(t, Naming{}, "a", "b")
	r := c.resourcesFrom([]listed{{server: "a", pages: pages(`{"uri":"x://1"}`)}, {server: "b"}}, nil)
	if server, _, _, err := r.Route("x://unlisted"); err != nil || server != "a" {
		t.Errorf("an unlisted URI with one resources server: %q, %v", server, err)
	}
}

func TestRouteRef(t *testing.T) {
	r := twoServers(t)
	if s, u, err := r.RouteRef("a://items/{id}"); err != nil || s != "a" || u != "a://items/{id}" {
		t.Errorf("RouteRef(template) = %q %q %v", s, u, err)
	}
	if s, u, err := r.RouteRef("mcpx://b/q://search{?q,lang}"); err != nil || s != "b" || u != "q://search{?q,lang}" {
		t.Errorf("RouteRef(mcpx form) = %q %q %v", s, u, err)
	}
}

func TestPagesCursor(t *testing.T) {
	r := twoServers(t)
	for _, bad := range []string{"zzz", "eyJzIjoibm9uZSJ9" /* {"s":"none"} */, cursor{Server: "a", Cursor: "gone"}.encode()} {
		if _, _, err := r.List.Page(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("Page(%q): %v, want ErrBadCursor", bad, err)
		}
	}
	empty := (&Catalog{}).merge(nil, "x", nil)
	if items, next, err := empty.Page(""); err != nil || next != "" || items == nil || len(items) != 0 {
		t.Errorf("an empty list's page: %v %q %v", items, next, err)
	}
}

func TestTemplatePattern(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		match     bool
	}{
		{"file:///{path}", "file:///x.txt", true},
		{"file:///{path}", "file:///dir/x.txt", false},
		{"file:///{+path}", "file:///dir/x.txt", true},
		{"x://a{/seg}", "x://a/b/c", true},
		{"x://a{.ext}", "x://a.json", true},
		{"x://a{#frag}", "x://a#top", true},
		{"x://a.b/{id}", "x://aXb/1", false}, // literal dots stay literal
		{"x://{broken", "x://anything", false},
	}
	for _, tt := range tests {
		re := templatePattern(tt.tmpl)
		if got := re != nil && re.MatchString(tt.uri); got != tt.match {
			t.Errorf("%s matches %s: %v, want %v", tt.tmpl, tt.uri, got, tt.match)
		}
	}
}
