package relay

import (
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// The _meta keys of W3C trace context, as MCP requests carry it.
const (
	metaTraceparent = "traceparent"
	metaTracestate  = "tracestate"
)

// TraceContext is a W3C trace context: a traceparent header's value and
// its tracestate ("" for none).
type TraceContext struct {
	Traceparent string
	Tracestate  string
}

// Tracer makes a span of each tool call (the daemon's OpenTelemetry
// traces). StartCall is given the call and the trace context of the
// host's request (its params._meta; zero when it sent none), and returns
// the trace context the call goes upstream with (in its _meta, in place
// of the host's) and the function that ends the span, called once with
// how the call ended. It must not block.
type Tracer interface {
	StartCall(c CallInfo, parent TraceContext) (child TraceContext, end func(Outcome, error))
}

// SetTracer makes t the relay's tracer. It is called before the relay
// serves any call (the daemon wires it), once.
func (r *Relay) SetTracer(t Tracer) { r.tracer = t }

// startSpan starts c's span under the host's trace context and puts the
// span's in c's _meta.
func (r *Relay) startSpan(c *Call, info CallInfo) func(Outcome, error) {
	if c.Params == nil {
		c.Params = &jsonrpc.Object{}
	}
	var parent TraceContext
	if c.Params.Has("_meta") {
		if meta, ok := c.Params.EditObject("_meta"); ok {
			parent.Traceparent, _ = mcp.MetaString(meta, metaTraceparent)
			parent.Tracestate, _ = mcp.MetaString(meta, metaTracestate)
		}
	}
	child, end := r.tracer.StartCall(info, parent)
	mcp.EditMeta(c.Params, func(meta *jsonrpc.Object) {
		meta.Delete(metaTraceparent)
		meta.Delete(metaTracestate)
		if child.Traceparent != "" {
			meta.Set(metaTraceparent, jsonrpc.Quote(child.Traceparent))
		}
		if child.Tracestate != "" {
			meta.Set(metaTracestate, jsonrpc.Quote(child.Tracestate))
		}
	})
	return end
}
