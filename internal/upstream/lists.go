package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// ListKind is one of the lists an upstream serves besides its tools.
type ListKind struct {
	Method  string // e.g. "resources/list"
	Field   string // the result's array, e.g. "resources"
	Changed string // the notification that drops the cached list, "" if none
	// Capability is the server capability that says the upstream serves
	// the list.
	Capability string
}

// The lists mcpx merges for hosts.
var (
	ListResources         = ListKind{mcp.MethodResourcesList, "resources", mcp.MethodResourcesListChanged, "resources"}
	ListResourceTemplates = ListKind{mcp.MethodResourceTemplatesList, "resourceTemplates", mcp.MethodResourcesListChanged, "resources"}
	ListPrompts           = ListKind{mcp.MethodPromptsList, "prompts", mcp.MethodPromptsListChanged, "prompts"}
)

// Page is one page of an upstream's list as the upstream paginated it:
// Cursor is the cursor that asked for it ("" for the first page), Items
// the definitions byte for byte.
type Page struct {
	Cursor string
	Items  []json.RawMessage
}

// lists caches a session's listings other than tools.
type lists struct {
	mu      sync.Mutex
	cached  map[string][]Page     // by method
	fetches map[string]*listFetch // listings under way, by method
}

type listFetch struct {
	done  chan struct{}
	pages []Page
	err   error
}

// HasCapability reports whether the upstream declared the server
// capability name (resources, prompts, completions, logging).
func (s *Session) HasCapability(name string) bool { return HasCapability(s.capabilities, name) }

// HasCapability reports whether capabilities (an initialize or
// server/discover result's) declare name.
func HasCapability(capabilities json.RawMessage, name string) bool {
	obj, err := jsonrpc.ParseObject(capabilities)
	if err != nil {
		return false
	}
	v, ok := obj.Get(name)
	return ok && string(v) != "null"
}

// List returns every page of the upstream's list of kind, listing it on
// first use and caching it until the upstream says the list changed. An
// upstream without the capability has an empty list. Callers share one
// listing, which runs under its own deadline (as Tools does); ctx bounds
// only this caller's wait.
func (s *Session) List(ctx context.Context, kind ListKind) ([]Page, error) {
	if !s.HasCapability(kind.Capability) {
		return nil, nil
	}
	l := &s.lists
	l.mu.Lock()
	if pages, ok := l.cached[kind.Method]; ok {
		l.mu.Unlock()
		return pages, nil
	}
	if l.fetches == nil {
		l.fetches, l.cached = map[string]*listFetch{}, map[string][]Page{}
	}
	f := l.fetches[kind.Method]
	if f == nil {
		f = &listFetch{done: make(chan struct{})}
		l.fetches[kind.Method] = f
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			lctx, cancel := context.WithTimeoutCause(context.Background(), listWait,
				fmt.Errorf("upstream %q did not answer %s within %s", s.Server, kind.Method, listWait))
			defer cancel()
			f.pages, f.err = s.listPages(lctx, kind)
			l.mu.Lock()
			if f.err == nil && l.fetches[kind.Method] == f {
				l.cached[kind.Method] = f.pages
			}
			if l.fetches[kind.Method] == f {
				delete(l.fetches, kind.Method)
			}
			l.mu.Unlock()
			close(f.done)
		}()
	}
	l.mu.Unlock()
	select {
	case <-f.done:
		return f.pages, f.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// dropLists forgets the cached lists a notification says changed. A
// listing under way is not cached when it ends: it may predate the change.
func (s *Session) dropLists(notification string) {
	l := &s.lists
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range []ListKind{ListResources, ListResourceTemplates, ListPrompts} {
		if k.Changed == notification {
			delete(l.cached, k.Method)
			delete(l.fetches, k.Method)
		}
	}
}

func (s *Session) listPages(ctx context.Context, kind ListKind) ([]Page, error) {
	var pages []Page
	seen := map[string]bool{}
	cursor := ""
	for range maxToolPages {
		params := &jsonrpc.Object{}
		if cursor != "" {
			params.Set("cursor", jsonrpc.MustMarshal(cursor))
		}
		raw, err := s.Call(ctx, kind.Method, params)
		if err != nil {
			return nil, fmt.Errorf("listing %s of %q: %w", kind.Field, s.Server, err)
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("reading %s of %q: %w", kind.Field, s.Server, err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(res[kind.Field], &items); err != nil && res[kind.Field] != nil {
			return nil, fmt.Errorf("reading %s of %q: %w", kind.Field, s.Server, err)
		}
		pages = append(pages, Page{Cursor: cursor, Items: items})
		var next string
		_ = json.Unmarshal(res["nextCursor"], &next)
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cursor = next
	}
	return pages, nil
}
