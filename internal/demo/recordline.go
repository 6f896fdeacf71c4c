package demo

import (
	"encoding/json"
	"slices"
	"strconv"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// appendEvent appends e as one line of the record (without the newline):
// the JSON encoding/json gives [Event], member for member, written
// directly. Every event of every request goes through here, so the
// fixture's own cost per call must not grow with what the client sent:
// raw members (the peer's JSON, valid because it was decoded) are copied
// as they are, compacted only if they span lines.
func appendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"event":`...)
	b = jsonrpc.AppendString(b, e.Event)
	raw := func(key string, v json.RawMessage) {
		if len(v) > 0 {
			b = append(append(append(b, ",\""...), key...), "\":"...)
			b = jsonrpc.AppendRaw(b, v)
		}
	}
	str := func(key, v string) {
		if v != "" {
			b = append(append(append(b, ",\""...), key...), "\":"...)
			b = jsonrpc.AppendString(b, v)
		}
	}
	num := func(key string, v int64) {
		b = append(append(append(b, ",\""...), key...), "\":"...)
		b = strconv.AppendInt(b, v, 10)
	}
	raw("id", e.ID)
	raw("requestId", e.RequestID)
	str("reason", e.Reason)
	str("method", e.Method)
	str("tool", e.Tool)
	raw(mcp.MetaProgressToken, e.ProgressToken)
	raw("meta", e.Meta)
	if e.Known != nil {
		b = append(b, `,"known":`...)
		b = strconv.AppendBool(b, *e.Known)
	}
	if e.ElapsedMs != nil {
		num("elapsedMs", *e.ElapsedMs)
	}
	if e.Progress != nil {
		b = append(b, `,"progress":`...)
		b = strconv.AppendFloat(b, *e.Progress, 'g', -1, 64)
	}
	str("message", e.Message)
	str("outcome", e.Outcome)
	str("requested", e.Requested)
	str("protocolVersion", e.ProtocolVersion)
	str("session", e.Session)
	if len(e.Headers) > 0 {
		b = append(b, `,"headers":{`...)
		keys := make([]string, 0, len(e.Headers))
		for k := range e.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json orders a map
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonrpc.AppendString(b, k)
			b = append(b, ':')
			b = jsonrpc.AppendString(b, e.Headers[k])
		}
		b = append(b, '}')
	}
	if e.Status != 0 {
		num("status", int64(e.Status))
	}
	if e.Code != 0 {
		num("code", e.Code)
	}
	str("lastEventId", e.LastEventID)
	b = append(b, `,"at":`...)
	b = jsonrpc.AppendString(b, e.At)
	return append(b, '}')
}
