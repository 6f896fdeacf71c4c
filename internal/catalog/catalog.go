package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/upstream"
)

// Naming says how tools are exposed.
type Naming struct {
	// Prefix is "always" (server + separator + tool) or "auto" (the bare
	// tool name unless two servers share it).
	Prefix    string
	Separator string
}

// MaxNameLen is the longest exposed name: hosts' model APIs reject longer
// tool names. Longer names are shortened with a hash suffix.
const MaxNameLen = 64

// Reserved names belong to mcpx's own meta-tools.
var Reserved = map[string]bool{"mcpx_search": true, "mcpx_call": true, "mcpx_exec": true, "mcpx_describe": true,
	"mcpx_job": true, "mcpx_job_cancel": true}

// Tool is one exposed tool.
type Tool struct {
	Name        string // exposed
	Server      string
	Tool        string // the upstream's name
	Title       string
	Description string
	Raw         json.RawMessage // the definition with Name as its name
	up          upstream.Tool   // as the upstream listed it
}

// InputSchema returns the tool's inputSchema, raw.
func (t *Tool) InputSchema() json.RawMessage {
	obj, err := jsonrpc.ParseObject(t.up.Raw)
	if err != nil {
		return nil
	}
	s, _ := obj.Get("inputSchema")
	return s
}

// Snapshot is the catalog at one moment.
type Snapshot struct {
	Tools  []*Tool           // sorted by exposed name
	Errors map[string]string // servers that could not be listed, and why
	// Collisions are the tools left out because another server's tool
	// has their exposed name (first server in name order wins).
	Collisions []Collision
	byName     map[string]*Tool
}

// Collision is two servers' tools exposed under one name: Server's Tool is
// listed and called under it, HiddenServer's HiddenTool is unreachable.
type Collision struct {
	Name         string
	Server, Tool string
	HiddenServer string
	HiddenTool   string
}

// String says what collided and the way out.
func (c Collision) String() string {
	return fmt.Sprintf("tool name %q is both %s's %q (listed and called) and %s's %q (hidden): rename a server, or set mcpx.toolNames.separator to one neither name holds",
		c.Name, c.Server, c.Tool, c.HiddenServer, c.HiddenTool)
}

// Lookup returns the tool exposed under name.
func (s *Snapshot) Lookup(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Catalog lists tools across the pool.
type Catalog struct {
	pool   *upstream.Pool
	naming Naming
	log    *slog.Logger

	mu         sync.Mutex
	collisions []Collision     // of the latest listing
	warned     map[string]bool // collisions logged, by String
}

// Collisions returns the name collisions of the latest listing.
func (c *Catalog) Collisions() []Collision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.collisions)
}

// noteCollisions keeps a listing's collisions and logs each new one once.
func (c *Catalog) noteCollisions(cs []Collision) {
	c.mu.Lock()
	c.collisions = cs
	var fresh []Collision
	for _, col := range cs {
		if k := col.String(); !c.warned[k] {
			if c.warned == nil {
				c.warned = map[string]bool{}
			}
			c.warned[k] = true
			fresh = append(fresh, col)
		}
	}
	c.mu.Unlock()
	for _, col := range fresh {
		c.log.Warn("two servers' tools share an exposed name", "name", col.Name, "listed", col.Server, "hidden", col.HiddenServer, "why", col.String())
	}
}

// New returns a catalog over pool.
func New(pool *upstream.Pool, naming Naming, log *slog.Logger) *Catalog {
	if naming.Separator == "" {
		naming.Separator = "__"
	}
	if naming.Prefix == "" {
		naming.Prefix = "always"
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Catalog{pool: pool, naming: naming, log: log}
}

// Snapshot lists every server's tools, starting servers as needed (not
// those stopped for being idle: their tools are known), in parallel. A server that fails is left out and named in Errors.
func (c *Catalog) Snapshot(ctx context.Context) *Snapshot {
	names := c.pool.Names()
	lists := make([][]upstream.Tool, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i], errs[i] = c.pool.Tools(ctx, name)
		}()
	}
	wg.Wait()
	return c.build(names, lists, errs)
}

// build makes a snapshot of the servers' listings (errs[i] when server
// names[i] could not be listed).
func (c *Catalog) build(names []string, lists [][]upstream.Tool, errs []error) *Snapshot {
	snap := &Snapshot{Errors: map[string]string{}, byName: map[string]*Tool{}}
	count := map[string]int{}
	for i := range names {
		if errs[i] != nil {
			snap.Errors[names[i]] = errs[i].Error()
			c.log.Warn("leaving a server out of the tool list", "server", names[i], "err", errs[i])
			continue
		}
		for _, t := range lists[i] {
			count[t.Name]++
		}
	}
	for i, server := range names {
		for _, t := range lists[i] {
			name := c.exposedName(server, t.Name, count[t.Name] > 1)
			if kept, taken := snap.byName[name]; taken {
				snap.Collisions = append(snap.Collisions, Collision{Name: name, Server: kept.Server, Tool: kept.Tool, HiddenServer: server, HiddenTool: t.Name})
				continue
			}
			tool := &Tool{Name: name, Server: server, Tool: t.Name, Title: t.Title, Description: t.Description, up: t}
			tool.Raw = renamed(t.Raw, name)
			snap.byName[name] = tool
			snap.Tools = append(snap.Tools, tool)
		}
	}
	sort.Slice(snap.Tools, func(i, j int) bool { return snap.Tools[i].Name < snap.Tools[j].Name })
	c.noteCollisions(snap.Collisions)
	return snap
}

func (c *Catalog) exposedName(server, tool string, collides bool) string {
	name := tool
	if c.naming.Prefix != "auto" || collides || Reserved[tool] {
		name = server + c.naming.Separator + tool
	}
	if len(name) <= MaxNameLen {
		return name
	}
	// Cut at a character boundary and fill up with more of the hash, so
	// that every shortened name is exactly MaxNameLen bytes (Route relies
	// on it) and valid UTF-8.
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	cut := MaxNameLen - len("_12345678")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "_" + hex.EncodeToString(sum[:])[:MaxNameLen-1-cut]
}

// renamed returns def with its name member replaced, every other byte kept.
func renamed(def json.RawMessage, name string) json.RawMessage {
	obj, err := jsonrpc.ParseObject(def)
	if err != nil {
		return def
	}
	obj.Set("name", jsonrpc.MustMarshal(name))
	return obj.Bytes()
}

// Route finds the server and upstream tool behind an exposed name without
// listing anything, when the name has the server prefix. It returns false
// for names only a snapshot can resolve (bare, shortened or ambiguous
// names).
func (c *Catalog) Route(name string) (server, tool string, ok bool) {
	// The server name that, with the separator, starts name: each place
	// the separator occurs in name is a candidate (a name may hold the
	// separator; candidates may overlap). Where two servers' names fit ("a___x" is a's "_x" and a_'s "x"),
	// the name is ambiguous and the listing decides, as it does for
	// listing: routing and listing never disagree.
	best, sep := "", c.naming.Separator
	for i := len(name) - len(sep); i >= 0; i-- {
		if strings.HasPrefix(name[i:], sep) && c.pool.Has(name[:i]) {
			if best != "" {
				return "", "", false
			}
			best = name[:i]
		}
	}
	if best == "" || len(name) == len(best)+len(sep) {
		return "", "", false
	}
	if len(name) == MaxNameLen {
		return "", "", false // may be a shortened name
	}
	return best, name[len(best)+len(c.naming.Separator):], true
}

// Resolve finds the server and upstream tool behind an exposed name. With
// every name prefixed, the name itself says where it goes; with bare names
// allowed ("auto"), a bare name may look prefixed ("git__log" of server
// "files"), so the listing decides, and the prefix is only the fallback for
// a server that could not be listed (its call then says why).
func (c *Catalog) Resolve(ctx context.Context, name string) (server, tool string, ok bool) {
	if c.naming.Prefix != "auto" {
		if server, tool, ok := c.Route(name); ok {
			return server, tool, true
		}
	}
	if t, ok := c.Snapshot(ctx).Lookup(name); ok {
		return t.Server, t.Tool, true
	}
	return c.Route(name)
}

// ParamHeaders returns the x-mcp-header annotations of the tool exposed
// under name, read once per listing of its server: the HTTP face checks
// every 2026-07-28 tools/call's Mcp-Param-* headers against them. With
// server prefixes on (the default), it looks only in the cached tools of
// the server the name routes to, not in a snapshot of every server.
func (c *Catalog) ParamHeaders(ctx context.Context, name string) (*upstream.ParamHeaders, bool) {
	if c.naming.Prefix != "auto" {
		if server, tool, ok := c.Route(name); ok {
			if tools, err := c.pool.Tools(ctx, server); err == nil {
				for i := range tools {
					if t := &tools[i]; t.Name == tool && c.exposedName(server, t.Name, false) == name {
						return t.ParamHeaders(), true
					}
				}
			}
		}
	}
	t, ok := c.Snapshot(ctx).Lookup(name)
	if !ok {
		return nil, false
	}
	return t.up.ParamHeaders(), true
}

// HasServer reports whether name is a configured, enabled server.
func (c *Catalog) HasServer(name string) bool {
	for _, s := range c.pool.Names() {
		if s == name {
			return true
		}
	}
	return false
}

// HasTool reports whether server lists tool (by its upstream name), from
// its cached listing (listing it if needed); listed is false when the
// server could not be listed, and then has says nothing.
func (c *Catalog) HasTool(ctx context.Context, server, tool string) (has, listed bool) {
	_, has, err := c.pool.Tool(ctx, server, tool)
	return has, err == nil
}
