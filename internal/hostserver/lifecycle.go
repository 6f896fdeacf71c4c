package hostserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"mcpx/internal/hostsurface"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// request is one host request with what its era says of it.
type request struct {
	msg     *jsonrpc.Message
	sink    sink // where its response and progress go
	params  *jsonrpc.Object
	version string
	modern  bool
	caps    json.RawMessage // the host's capabilities for this request
	entry   *relay.Entry
	server  string // the upstream a tools/call went to, once known

	// Set by admit, for the handler goroutine (execute): the request's
	// context, its cancel and its handler; and the storage of its
	// answeredSink and hostAsker, so that they take no allocation of
	// their own. Saves two allocations a request (BenchmarkRelayCall,
	// allocs/op, in internal/hostserver). The asker's hs is the request's
	// session from the start (classify; session, taskreq.go).
	ctx       context.Context
	cancel    context.CancelCauseFunc
	handler   handler
	answered  answeredSink
	asker     hostAsker
	paramsObj jsonrpc.Object // params' storage

	// meta is params._meta as classify parsed it for a 2026-07-28
	// request (its stamp), nil for a legacy one. relayCall hands it on to
	// be edited for the upstream, so that the _meta is parsed once:
	// readers of the host's _meta (its logLevel) read it before that. (It
	// is an allocation of its own, rather than storage in request, which
	// would make every legacy request 300 bytes larger.)
	meta *jsonrpc.Object

	// task is set for a task-augmented tools/call (taskreq.go).
	task *taskRequest

	// job is how its call may become a job while it runs (jobhost.go),
	// nil for a call that never may: set once, on the request's goroutine
	// before its call starts, and read by its live checks on others. A
	// pointer, not storage, so that a plain call's request stays in a
	// smaller size class. Saves 128 bytes a call (BenchmarkJobStoreNoTimer,
	// B/op, in internal/hostserver).
	job atomic.Pointer[jobHost]
}

// handler serves one request that admit dispatches to a handler goroutine. A
// method expression, (*hostSession).toolsCall say, is one without an
// allocation per request, as a method value would be. Saves one
// allocation a request (BenchmarkRelayCall, allocs/op).
type handler func(hs *hostSession, ctx context.Context, req *request)

// instructions names the servers behind mcpx that the host, known by
// client (its clientInfo.name), may use.
func (hs *hostSession) instructions(client string) string {
	names := hs.srv.relay.Pool().Names()
	if visible := hs.filterFor(client).visible(); visible != nil {
		names = slices.DeleteFunc(names, func(n string) bool { return !visible(n) })
	}
	return fmt.Sprintf("mcpx gateway in front of %d MCP server(s): %s. Tools are named <server>__<tool> unless configured otherwise. "+
		"Use mcpx_search to find tools by words and mcpx_call to call any tool by name.", len(names), strings.Join(names, ", "))
}

// initialize runs the legacy handshake: the connection is legacy from now on.
func (hs *hostSession) initialize(msg *jsonrpc.Message, out sink) {
	var p mcp.InitializeParams
	if err := json.Unmarshal(msg.Params, &p); err != nil {
		fail(out, msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid initialize params: %v", err))
		return
	}
	hs.mu.Lock()
	if hs.initialized {
		hs.mu.Unlock()
		fail(out, msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: the connection is already initialized"))
		return
	}
	hs.initialized = true
	if hs.out != nil { // a stream of its own to carry list changes
		hs.srv.watchLegacy(hs, hs.out)
	}
	hs.version = mcp.NegotiateLegacy(p.ProtocolVersion)
	hs.clientCaps = p.Capabilities
	hs.clientName = p.ClientInfo.Name
	version := hs.version
	hs.mu.Unlock()
	hs.srv.log.Info("host initialized", "host", hs.id, "client", p.ClientInfo.Name, "asked", p.ProtocolVersion, "version", version)
	reply(out, msg.ID, jsonrpc.MustMarshal(struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}{version, hs.capabilities(false), hs.srv.info, hs.instructions(p.ClientInfo.Name)}))
}

// discover answers server/discover (2026-07-28) locally.
func (hs *hostSession) discover(msg *jsonrpc.Message, out sink) {
	client := ""
	if params, err := jsonrpc.ParseObject(msg.Params); err == nil {
		client = hs.srv.clientName(mcp.Meta(params))
	}
	reply(out, msg.ID, jsonrpc.MustMarshal(struct {
		ResultType        string          `json:"resultType"`
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Meta              json.RawMessage `json:"_meta"`
		Instructions      string          `json:"instructions"`
		// What mcpx serves follows its upstreams and their config, and is
		// this user's: not to be kept, nor shared.
		TTLMs      int64  `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}{mcp.ResultTypeComplete, mcp.Versions, hs.capabilities(true), hs.serverInfoMeta(), hs.instructions(client), 0, "private"}))
}

func (hs *hostSession) serverInfoMeta() json.RawMessage {
	meta := &jsonrpc.Object{}
	meta.Set(mcp.MetaServerInfo, hs.srv.info)
	return meta.Bytes()
}

// classify settles a request's era (docs/protocol-notes.md §6.3): an initialized
// connection is legacy; otherwise the request must carry the 2026-07-28
// _meta, and is served statelessly.
func (hs *hostSession) classify(msg *jsonrpc.Message, out sink) (*request, *jsonrpc.Error) {
	req := &request{msg: msg, sink: out}
	req.asker.hs = hs // its session (request.session)
	if err := jsonrpc.ParseObjectInto(&req.paramsObj, msg.Params); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: must be an object")
	}
	params := &req.paramsObj
	req.params = params
	hs.mu.Lock()
	if hs.initialized {
		req.version, req.caps = hs.version, hs.clientCaps
		hs.mu.Unlock()
		return req, nil
	}
	hs.mu.Unlock()
	meta := mcp.Meta(params)
	v, ok := mcp.MetaString(meta, mcp.MetaProtocolVersion)
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams,
			"invalid params: missing _meta %q; send initialize first, or use protocol version %s", mcp.MetaProtocolVersion, mcp.Version20260728)
	}
	if !mcp.IsModern(v) || !mcp.IsSupported(v) {
		return nil, &jsonrpc.Error{
			Code:    mcp.CodeUnsupportedProtocolVersion,
			Message: "Unsupported protocol version",
			Data: jsonrpc.MustMarshal(struct {
				Supported []string `json:"supported"`
				Requested string   `json:"requested"`
			}{mcp.ModernVersions(), v}),
		}
	}
	caps, ok := meta.Get(mcp.MetaClientCapabilities)
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: missing _meta %q", mcp.MetaClientCapabilities)
	}
	if err := hostsurface.CheckLogLevel(meta); err != nil {
		return nil, err
	}
	req.version, req.modern, req.caps = v, true, caps
	req.meta = meta
	return req, nil
}

// result adapts a result for the request's era: 2026-07-28 hosts get
// resultType and mcpx's serverInfo; legacy hosts get neither.
func (req *request) result(raw json.RawMessage, serverInfo json.RawMessage) json.RawMessage {
	obj, err := jsonrpc.ParseObject(raw)
	if err != nil {
		return raw
	}
	return req.resultOf(raw, obj, serverInfo)
}

// resultOf is result for raw already parsed as obj, which it may edit.
func (req *request) resultOf(raw json.RawMessage, obj *jsonrpc.Object, serverInfo json.RawMessage) json.RawMessage {
	changed := false
	if req.modern {
		if _, ok := obj.Get("resultType"); !ok {
			obj.Set("resultType", json.RawMessage(`"`+mcp.ResultTypeComplete+`"`))
			changed = true
		}
		if metaHas(obj, mcp.MetaServerInfo) {
			mcp.SetMeta(obj, mcp.MetaServerInfo, serverInfo)
			changed = true
		}
		if !changed && obj.Verbatim(raw) {
			return raw // what Bytes would return, without the copy
		}
		return obj.Bytes()
	}
	if rt, ok := obj.Get("resultType"); ok && string(rt) == `"`+mcp.ResultTypeComplete+`"` {
		obj.Delete("resultType")
		changed = true
	}
	if metaHas(obj, mcp.MetaServerInfo) {
		mcp.EditMeta(obj, func(meta *jsonrpc.Object) { meta.Delete(mcp.MetaServerInfo) })
		changed = true
	}
	if !changed {
		return raw // byte for byte
	}
	return obj.Bytes()
}

// metaHas reports whether obj's _meta has key, as mcp.Meta(obj).Get(key)
// does, without making an empty _meta object when it has none.
func metaHas(obj *jsonrpc.Object, key string) bool {
	raw, ok := obj.Get("_meta")
	if !ok {
		return false
	}
	meta, err := jsonrpc.ParseObject(raw)
	if err != nil {
		return false
	}
	_, ok = meta.Get(key)
	return ok
}

// hostMeta returns the host's params._meta, as mcp.Meta(req.params) does:
// the one classify parsed, if it did. The caller must not edit it.
func (req *request) hostMeta() *jsonrpc.Object {
	if req.meta != nil {
		return req.meta
	}
	return mcp.Meta(req.params)
}
