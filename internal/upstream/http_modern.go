package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

// modernTransport speaks Streamable HTTP as revision 2026-07-28 defines
// it: no session, every request its own POST carrying the request metadata
// headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name, and Mcp-Param-* from
// the tool's x-mcp-header annotations), answered by JSON or by an SSE
// stream of that request alone. Cancelling a request closes its stream;
// nothing else is ever posted: the revision has no client notifications
// over HTTP, and mcpx sends no responses (servers send no requests).
type modernTransport struct {
	*httpBase
	version string

	tmu   sync.Mutex
	tools map[string]toolSpec // by upstream name; nil until listed
	gen   uint64              // listings so far

	refreshMu sync.Mutex   // one listing of mcpx's own at a time
	ids       atomic.Int64 // ids of mcpx's own requests
}

// toolSpec is what a listing said of one tool: its parameter headers, or
// why its definition is rejected.
type toolSpec struct {
	params  []paramHeader
	invalid error
}

// listTimeout bounds a listing mcpx makes on its own, to learn a tool's
// headers before (or after a HeaderMismatch of) a call.
const listTimeout = 30 * time.Second

func (t *modernTransport) send(r *Request, msg *jsonrpc.Message) error {
	if r == nil {
		t.log.Debug("not posting a message 2026-07-28 has no use for over HTTP", "method", msg.Method)
		return nil
	}
	return t.start(r, msg, t.request)
}

func (t *modernTransport) request(x *exchange) {
	r := x.r
	// A listen is a stream held for the session's life, not a request in
	// flight: it takes no slot (it would hold one for ever).
	if x.msg.Method != mcp.MethodSubscriptionsListen {
		if !t.acquire(x.ctx) {
			return
		}
		defer t.release()
	}
	var (
		tool   string
		params []paramHeader
		call   = x.msg.Method == mcp.MethodToolsCall
		obj, _ = jsonrpc.ParseObject(x.msg.Params) // nil when not an object
	)
	if call {
		tool = objString(obj, "name")
		spec, known, gen := t.tool(tool)
		if !known && gen == 0 {
			// Called before any listing: list first, or the call would
			// miss the tool's headers (or call a rejected tool).
			if err := t.refreshTools(x.ctx, x.msg, gen); err != nil && x.ctx.Err() == nil {
				// Call without; the server will say what it misses.
				t.log.Debug("could not list tools before a call", "tool", tool, "err", err)
				t.markListed(gen)
			}
			spec, _, _ = t.tool(tool)
		}
		if spec.invalid != nil {
			t.conn.failRequest(r, fmt.Errorf("mcpx does not call tool %q of upstream %q: its definition is invalid: %w", tool, t.server, spec.invalid))
			return
		}
		params = spec.params
	}
	for retried := false; ; retried = true {
		next, again := t.post1(x, obj, params, call && !retried, tool)
		if !again {
			return
		}
		params = next
	}
}

// post1 posts the request once and handles the answer. After a
// HeaderMismatch to a tools/call, when mayRetry, it lists the tools again
// and asks for a retry with the listed headers (the spec's SHOULD).
// obj is the request's params, parsed (nil when not an object).
func (t *modernTransport) post1(x *exchange, obj *jsonrpc.Object, params []paramHeader, mayRetry bool, tool string) ([]paramHeader, bool) {
	r := x.r
	req, err := t.newRequest(x.ctx, http.MethodPost, t.url, x.msg.Encode())
	if err != nil {
		t.conn.failRequest(r, err)
		return nil, false
	}
	setMetadataHeaders(req.Header, t.versionOf(obj), x.msg.Method, obj, params)
	resp := t.postExchange(x, req)
	if resp == nil {
		return nil, false
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2 && isEventStream(resp):
		answered, err := t.readEvents(sse.NewReader(resp.Body, t.limit), r, t.conn.deliverFor(r))
		if !answered && x.ctx.Err() == nil {
			t.conn.failRequest(r, fmt.Errorf("%w (a 2026-07-28 stream cannot be resumed)", t.streamError(err)))
		}
		if answered {
			drainAnswered(x, resp.Body)
		}
	case resp.StatusCode/100 == 2:
		t.deliverJSON(r, resp, t.conn.deliverFor(r))
	default:
		he := t.responseError(resp)
		if mayRetry && he.RPC != nil && he.RPC.Code == mcp.CodeHeaderMismatch {
			resp.Body.Close()
			_, _, gen := t.tool(tool)
			if err := t.refreshTools(x.ctx, x.msg, gen); err == nil {
				if spec, known, _ := t.tool(tool); known && spec.invalid == nil {
					t.log.Info("retrying a call refused for its headers, with the tool's listed ones", "tool", tool)
					return spec.params, true
				}
			}
		}
		t.conn.failRequest(r, he)
	}
	return nil, false
}

// versionOf returns the revision the _meta of a request's params (parsed;
// nil when not an object) names, which its header must match; else the
// session's.
func (t *modernTransport) versionOf(params *jsonrpc.Object) string {
	var raw json.RawMessage
	if params != nil {
		raw, _ = params.Get("_meta")
	}
	if meta, err := jsonrpc.ParseObject(raw); err == nil {
		if v, ok := mcp.MetaString(meta, mcp.MetaProtocolVersion); ok && v != "" {
			return v
		}
	}
	return t.version
}

// cancel closes the request's stream: the 2026-07-28 signal. It reports
// whether the request had reached the server.
func (t *modernTransport) cancel(r *Request, reason string) bool {
	x := t.take(r)
	if x == nil {
		return false
	}
	x.cancel(errors.New(reason))
	return x.sent.Load()
}

func (t *modernTransport) stop(time.Duration) { t.shutdown(ErrStopped, nil) }

func (t *modernTransport) pid() int { return 0 }

func (t *modernTransport) stderrTail() string { return "" }

// tool returns what the last listing said of a tool, whether it named it,
// and how many listings there were.
func (t *modernTransport) tool(name string) (toolSpec, bool, uint64) {
	t.tmu.Lock()
	defer t.tmu.Unlock()
	spec, ok := t.tools[name]
	return spec, ok, t.gen
}

func (t *modernTransport) setTools(specs map[string]toolSpec) {
	t.tmu.Lock()
	defer t.tmu.Unlock()
	t.tools = specs
	t.gen++
}

// markListed records a failed listing, unless another happened since
// listing number seen, so that calls do not each try again.
func (t *modernTransport) markListed(seen uint64) {
	t.tmu.Lock()
	defer t.tmu.Unlock()
	if t.gen == seen {
		t.gen++
	}
}

// filterTools drops the tools whose x-mcp-header annotations are invalid
// (the spec: clients MUST exclude them from tools/list), warning for each,
// and keeps every tool's headers for its calls.
func (t *modernTransport) filterTools(tools []Tool) []Tool {
	specs := make(map[string]toolSpec, len(tools))
	kept := make([]Tool, 0, len(tools))
	for _, tool := range tools {
		spec := t.specOf(tool.Name, tool.Raw)
		specs[tool.Name] = spec
		if spec.invalid == nil {
			kept = append(kept, tool)
		}
	}
	t.setTools(specs)
	return kept
}

// specOf reads a tool definition's headers, warning when it is rejected.
func (t *modernTransport) specOf(name string, def json.RawMessage) toolSpec {
	obj, err := jsonrpc.ParseObject(def)
	if err != nil {
		return toolSpec{}
	}
	schema, ok := obj.Get("inputSchema")
	if !ok {
		return toolSpec{}
	}
	params, err := toolHeaders(schema)
	if err != nil {
		t.log.Warn("leaving out an upstream tool with an invalid x-mcp-header annotation", "tool", name, "reason", err)
		return toolSpec{invalid: err}
	}
	return toolSpec{params: params}
}

// refreshTools lists the upstream's tools on mcpx's own behalf, with the
// protocol _meta of msg, unless a listing happened since the caller saw
// listing number seen.
func (t *modernTransport) refreshTools(ctx context.Context, msg *jsonrpc.Message, seen uint64) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	if _, _, gen := t.tool(""); gen != seen {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	meta := &jsonrpc.Object{}
	if orig, err := jsonrpc.ParseObject(rawRequestMeta(msg)); err == nil {
		for _, k := range []string{mcp.MetaProtocolVersion, mcp.MetaClientInfo, mcp.MetaClientCapabilities} {
			if v, ok := orig.Get(k); ok {
				meta.Set(k, v)
			}
		}
	}
	specs := map[string]toolSpec{}
	cursor, cursors := "", map[string]bool{}
	for page := 0; page < maxToolPages; page++ {
		params := &jsonrpc.Object{}
		if cursor != "" {
			params.Set("cursor", jsonrpc.MustMarshal(cursor))
		}
		if meta.Len() > 0 {
			params.Set("_meta", meta.Bytes())
		}
		id := jsonrpc.NewStringID(fmt.Sprintf("mcpx-list-%d", t.ids.Add(1)))
		raw, err := t.roundTrip(ctx, jsonrpc.NewRequest(id, mcp.MethodToolsList, params.Bytes()))
		if err != nil {
			return fmt.Errorf("listing the tools of %q: %w", t.server, err)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("reading the tools of %q: %w", t.server, err)
		}
		for _, def := range res.Tools {
			var named struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(def, &named) == nil && named.Name != "" {
				specs[named.Name] = t.specOf(named.Name, def)
			}
		}
		if res.NextCursor == "" || cursors[res.NextCursor] {
			break
		}
		cursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
	t.setTools(specs)
	return nil
}

// roundTrip sends a request of mcpx's own and returns its result, reading
// the answer as JSON or as a stream up to the response to msg.
func (t *modernTransport) roundTrip(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	req, err := t.newRequest(ctx, http.MethodPost, t.url, msg.Encode())
	if err != nil {
		return nil, err
	}
	obj, _ := jsonrpc.ParseObject(msg.Params)
	setMetadataHeaders(req.Header, t.versionOf(obj), msg.Method, obj, nil)
	resp, err := t.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer := func(data []byte) (*jsonrpc.Message, bool) {
		m, err := jsonrpc.Decode(data)
		return m, err == nil && m.IsResponse() && m.ID == msg.ID
	}
	var m *jsonrpc.Message
	switch {
	case resp.StatusCode/100 != 2:
		return nil, t.responseError(resp)
	case isEventStream(resp):
		rd := sse.NewReader(resp.Body, t.limit)
		for m == nil {
			ev, err := rd.Next()
			if err != nil {
				return nil, t.streamError(err)
			}
			if got, ok := answer(ev.Data); ok && ev.Type == "message" {
				m = got
			}
		}
	default:
		data, err := t.readJSON(resp)
		if err != nil {
			return nil, err
		}
		got, ok := answer(data)
		if !ok {
			return nil, &HTTPError{Server: t.server, Method: http.MethodPost, Status: resp.StatusCode, Body: snippet(data)}
		}
		m = got
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// objString returns a string member of a message's params (parsed; nil
// when not an object), or "".
func objString(obj *jsonrpc.Object, key string) string {
	if obj == nil {
		return ""
	}
	raw, _ := obj.Get(key)
	s, _ := jsonrpc.Unquote(raw)
	return s
}
