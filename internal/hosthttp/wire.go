package hosthttp

import (
	"bytes"
	"encoding/base64"
	"mime"
	"net/http"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/sse"
)

// HTTP headers of Streamable HTTP.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)

// Accept is what a request's Accept header allows.
type Accept struct{ JSON, SSE bool }

// ParseAccept reads Accept values. No header accepts anything; the spec
// asks clients for both types, but some send only the one they expect.
func ParseAccept(values []string) Accept {
	if len(values) == 0 {
		return Accept{true, true}
	}
	var a Accept
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			mt := part
			if !plainMediaTypes[part] { // those parse as themselves, with no q
				var params map[string]string
				var err error
				mt, params, err = mime.ParseMediaType(part)
				if err != nil || params["q"] == "0" || params["q"] == "0.0" {
					continue
				}
			}
			switch mt {
			case "*/*":
				a.JSON, a.SSE = true, true
			case "application/json", "application/*":
				a.JSON = true
			case "text/event-stream", "text/*":
				a.SSE = true
			}
		}
	}
	return a
}

// plainMediaTypes are the media types hosts send in Accept as they are:
// mime.ParseMediaType gives each back unchanged, with no parameters, but
// allocates to say so.
var plainMediaTypes = map[string]bool{"application/json": true, "text/event-stream": true, "*/*": true}

// IsJSONType reports whether a Content-Type is application/json.
func IsJSONType(ct string) bool {
	if ct == "application/json" { // the usual, without parsing
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// Error answers with status and a JSON-RPC error.
func Error(w http.ResponseWriter, status int, id jsonrpc.ID, err *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.NewError(id, err).Encode())
}

// HeaderValue returns a header's value with its optional whitespace
// removed, and whether it was sent.
func HeaderValue(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[0]), true
}

// DecodeHeaderValue undoes the spec's base64 sentinel, =?base64?...?=.
func DecodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// ErrorStatus is the HTTP status of a 2026-07-28 response answered as one
// JSON body: 400 for the errors that revision sends with it, whoever
// raised them (an upstream's -32021 relayed to the host included:
// MissingRequiredClientCapability, HeaderMismatch, UnsupportedProtocolVersion),
// 200 for anything else. (A response on an SSE stream has its 200
// already.)
func ErrorStatus(line []byte) int {
	msg, err := jsonrpc.Decode(line)
	if err != nil || msg.Error == nil {
		return http.StatusOK
	}
	switch msg.Error.Code {
	case mcp.CodeMissingRequiredCapability, mcp.CodeHeaderMismatch, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// IsResponse reports whether line, as [jsonrpc.Message.Encode] writes it,
// is a response: it has an id, and no method after it (a request mcpx
// relays from an upstream has both).
func IsResponse(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return false
	}
	if len(rest) > 0 && rest[0] == '"' {
		i := 1
		for i < len(rest) && rest[i] != '"' {
			if rest[i] == '\\' {
				i++
			}
			i++
		}
		rest = rest[min(i+1, len(rest)):]
	} else if i := bytes.IndexByte(rest, ','); i >= 0 {
		rest = rest[i:]
	}
	return !bytes.HasPrefix(rest, []byte(`,"method":`))
}

// WriteSingle answers with one message: JSON, or one SSE event for a host
// that takes only SSE.
func WriteSingle(w http.ResponseWriter, acc Accept, line []byte) {
	if acc.JSON {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(line)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = sse.WriteEvent(w, "", "", line)
}
