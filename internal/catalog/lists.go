package catalog

import (
	"context"
	"slices"
	"sync"

	"mcpx/internal/upstream"
)

// listed is one server's list of one kind.
type listed struct {
	server string
	pages  []upstream.Page
	err    error
}

// listAll lists kind on every server visible reports true for (nil:
// every server), starting servers as needed, in parallel; servers without
// the capability have no pages.
func (c *Catalog) listAll(ctx context.Context, kind upstream.ListKind, visible func(server string) bool) []listed {
	names := c.pool.Names()
	if visible != nil {
		names = slices.DeleteFunc(names, func(n string) bool { return !visible(n) })
	}
	out := make([]listed, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			out[i].server = name
			s, err := c.pool.Session(ctx, name)
			if err == nil {
				out[i].pages, err = s.List(ctx, kind)
			}
			out[i].err = err
		})
	}
	wg.Wait()
	return out
}

// merge turns listings into Pages, each item exposed by expose (which
// returns nil to leave an item out).
func (c *Catalog) merge(ls []listed, what string, expose func(server string, item []byte) []byte) *Pages {
	p := &Pages{Errors: map[string]string{}}
	for _, l := range ls {
		if l.err != nil {
			p.Errors[l.server] = l.err.Error()
			c.log.Warn("leaving a server out of the "+what+" list", "server", l.server, "err", l.err)
			continue
		}
		for _, pg := range l.pages {
			np := page{server: l.server, cursor: pg.Cursor}
			for _, it := range pg.Items {
				if x := expose(l.server, it); x != nil {
					np.items = append(np.items, x)
				}
			}
			if len(np.items) > 0 {
				p.pages = append(p.pages, np)
			}
		}
	}
	return p
}
