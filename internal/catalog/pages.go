package catalog

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrBadCursor is returned for a cursor mcpx did not mint, or one whose
// page no longer exists (the list changed since: list again).
var ErrBadCursor = errors.New("invalid cursor")

// Pages is a merged list as hosts page through it: each upstream's pages,
// in server order, as the upstream paginated them, with the items as mcpx
// exposes them.
type Pages struct {
	pages  []page
	Errors map[string]string // servers that could not be listed, and why
}

type page struct {
	server string
	cursor string // the upstream's cursor for this page; "" for its first
	items  []json.RawMessage
}

// cursor is what mcpx's own cursor encodes: which upstream, and that
// upstream's cursor for the page.
type cursor struct {
	Server string `json:"s"`
	Cursor string `json:"c"`
}

func (c cursor) encode() string {
	return base64.RawURLEncoding.EncodeToString(jsonMarshal(c))
}

func jsonMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Server == "" {
		return c, fmt.Errorf("%w %q: not one mcpx gave out", ErrBadCursor, s)
	}
	return c, nil
}

// Page returns the items of the page the host's cursor names ("" for the
// first) and the cursor of the next page ("" at the end).
func (p *Pages) Page(hostCursor string) (items []json.RawMessage, next string, err error) {
	i := 0
	if hostCursor != "" {
		c, err := decodeCursor(hostCursor)
		if err != nil {
			return nil, "", err
		}
		i = -1
		for j, pg := range p.pages {
			if pg.server == c.Server && pg.cursor == c.Cursor {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, "", fmt.Errorf("%w: server %q has no such page any more (its list changed); list again from the start", ErrBadCursor, c.Server)
		}
	}
	if i >= len(p.pages) {
		return []json.RawMessage{}, "", nil
	}
	if i+1 < len(p.pages) {
		next = cursor{Server: p.pages[i+1].server, Cursor: p.pages[i+1].cursor}.encode()
	}
	items = p.pages[i].items
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, next, nil
}

// Len returns how many items the list has across its pages.
func (p *Pages) Len() int {
	n := 0
	for _, pg := range p.pages {
		n += len(pg.items)
	}
	return n
}
