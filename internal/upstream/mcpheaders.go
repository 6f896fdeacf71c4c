package upstream

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// The request metadata headers of Streamable HTTP 2026-07-28
// (basic/transports/streamable-http, "Request Metadata"): the body's method,
// name and x-mcp-header-annotated arguments, mirrored so that intermediaries
// can route without parsing the body.

// Header names.
const (
	headerProtocolVersion = "MCP-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
	headerSessionID       = "Mcp-Session-Id"
	headerLastEventID     = "Last-Event-ID"
)

// xMCPHeader is the schema keyword that asks for a parameter's mirroring.
const xMCPHeader = "x-mcp-header"

// Base64 sentinel of a header value that is not plain ASCII.
const (
	sentinelStart = "=?base64?"
	sentinelEnd   = "?="
)

// encodeHeaderValue returns s as a header value: as it is when it is plain
// visible ASCII and spaces, not starting or ending with whitespace, and not
// itself looking like the sentinel; else the UTF-8 bytes in base64 between
// the sentinel markers.
func encodeHeaderValue(s string) string {
	if plainHeaderValue(s) {
		return s
	}
	return sentinelStart + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelEnd
}

func plainHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false // control characters (tab included), non-ASCII
		}
	}
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	return !(strings.HasPrefix(s, sentinelStart) && strings.HasSuffix(s, sentinelEnd))
}

// nameSource is the params member Mcp-Name mirrors, per method.
var nameSource = map[string]string{
	mcp.MethodToolsCall:     "name",
	mcp.MethodResourcesRead: "uri",
	mcp.MethodPromptsGet:    "name",
	mcp.MethodTasksGet:      "taskId",
	mcp.MethodTasksUpdate:   "taskId",
	mcp.MethodTasksCancel:   "taskId",
}

// setMetadataHeaders sets the modern request headers of a request: the
// revision, Mcp-Method, Mcp-Name when the method has one, and each
// Mcp-Param-{Name} of params (from the tool's x-mcp-header annotations).
// obj is the request's params, parsed: nil when they are not an object.
func setMetadataHeaders(h http.Header, version, method string, obj *jsonrpc.Object, params []paramHeader) {
	h.Set(headerProtocolVersion, version)
	h.Set(headerMethod, method)
	if obj == nil {
		return
	}
	if key, ok := nameSource[method]; ok {
		if raw, ok := obj.Get(key); ok {
			// As json.Unmarshal into a string: null is "".
			name, ok := jsonrpc.Unquote(raw)
			if ok || string(raw) == "null" {
				h.Set(headerName, encodeHeaderValue(name))
			}
		}
	}
	if len(params) == 0 {
		return
	}
	args, _ := obj.Get("arguments")
	for _, p := range params {
		if v, ok := p.value(args); ok {
			// Assigned directly: the name keeps the case the server gave it.
			h[headerParamPrefix+p.Name] = []string{encodeHeaderValue(v)}
		}
	}
}

// paramHeader is one x-mcp-header annotation of a tool's inputSchema: the
// header's name part and the chain of properties keys leading to the
// annotated parameter.
type paramHeader struct {
	Name string
	Path []string
}

// value returns the header value of the parameter in a call's arguments:
// strings as they are, integers in decimal, booleans as true or false.
// There is none when the path holds no value, null, or an object or array.
func (p paramHeader) value(args json.RawMessage) (string, bool) {
	cur := args
	for _, key := range p.Path {
		obj, err := jsonrpc.ParseObject(cur)
		if err != nil {
			return "", false
		}
		var ok bool
		if cur, ok = obj.Get(key); !ok {
			return "", false
		}
	}
	cur = bytes.TrimSpace(cur)
	if len(cur) == 0 {
		return "", false
	}
	switch cur[0] {
	case '"':
		var s string
		if json.Unmarshal(cur, &s) != nil {
			return "", false
		}
		return s, true
	case 't', 'f':
		return string(cur), string(cur) == "true" || string(cur) == "false"
	case 'n', '{', '[':
		return "", false
	}
	return numberText(string(cur)), true
}

// numberText returns a JSON number in decimal: an integer as written, an
// integral float (42.0, 4.2e1) as the integer it is when that is exact,
// anything else as written.
func numberText(s string) string {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return s
}

// toolHeaders reads the x-mcp-header annotations of a tool's inputSchema.
// An invalid annotation (not a non-empty token, a duplicate in any case, on
// a parameter whose type is not integer, string or boolean, or anywhere but
// at the end of a chain of properties keys from the root) makes the whole
// tool invalid: the error says why.
func toolHeaders(inputSchema json.RawMessage) ([]paramHeader, error) {
	w := &schemaWalk{seen: map[string]bool{}}
	w.schema(inputSchema, nil, true)
	if w.err != nil {
		return nil, w.err
	}
	return w.headers, nil
}

type schemaWalk struct {
	headers []paramHeader
	seen    map[string]bool // lower-cased names
	err     error
}

// dataKeywords hold instance values, not schemas: an x-mcp-header key in
// them is data.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// schema visits one schema. path is the chain of properties keys from the
// root; static says whether only properties keys led here.
func (w *schemaWalk) schema(raw json.RawMessage, path []string, static bool) {
	if w.err != nil {
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		w.nested(raw) // true, false, or an array of schemas
		return
	}
	if v, ok := members[xMCPHeader]; ok {
		w.annotation(v, members["type"], path, static)
	}
	for _, key := range slices.Sorted(maps.Keys(members)) {
		v := members[key]
		switch {
		case key == "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(props)) {
				w.schema(props[name], append(path[:len(path):len(path)], name), static)
			}
		case key == xMCPHeader || dataKeywords[key]:
		default:
			// items, oneOf, $defs, if/then/else, additionalProperties...:
			// whatever they hold is not statically reachable.
			w.nested(v)
		}
	}
}

// nested visits every schema inside v, none of them statically reachable.
func (w *schemaWalk) nested(v json.RawMessage) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return
	}
	switch v[0] {
	case '{':
		w.schema(v, nil, false)
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(v, &elems) == nil {
			for _, e := range elems {
				w.nested(e)
			}
		}
	}
}

func (w *schemaWalk) annotation(v, typ json.RawMessage, path []string, static bool) {
	var name string
	switch {
	case json.Unmarshal(v, &name) != nil:
		w.err = fmt.Errorf("%s %s is not a string", xMCPHeader, v)
	case name == "":
		w.err = fmt.Errorf("%s is empty", xMCPHeader)
	case !isToken(name):
		w.err = fmt.Errorf("%s %q is not an HTTP header name token", xMCPHeader, name)
	case !static || len(path) == 0:
		w.err = fmt.Errorf("%s %q is not on a property reachable from the root through properties alone", xMCPHeader, name)
	case w.seen[strings.ToLower(name)]:
		w.err = fmt.Errorf("%s %q is used twice (names are case-insensitive)", xMCPHeader, name)
	case !primitiveType(typ):
		w.err = fmt.Errorf("%s %q is on a parameter of type %s, not integer, string or boolean", xMCPHeader, name, typeText(typ))
	default:
		w.seen[strings.ToLower(name)] = true
		w.headers = append(w.headers, paramHeader{Name: name, Path: path})
	}
}

// primitiveType reports whether a schema's type is integer, string or
// boolean, or a list of those (null allowed besides: a null value sends no
// header). A missing type is not known to be primitive.
func primitiveType(typ json.RawMessage) bool {
	ok := func(t string) bool { return t == "integer" || t == "string" || t == "boolean" }
	var one string
	if json.Unmarshal(typ, &one) == nil {
		return ok(one)
	}
	var many []string
	if json.Unmarshal(typ, &many) != nil {
		return false
	}
	n := 0
	for _, t := range many {
		switch {
		case ok(t):
			n++
		case t != "null":
			return false
		}
	}
	return n > 0
}

func typeText(typ json.RawMessage) string {
	if len(typ) == 0 {
		return "(none)"
	}
	return string(typ)
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ParamValue is one x-mcp-header annotation of a tool, and the value a
// call's arguments give the header it names.
type ParamValue struct {
	Header string // Mcp-Param-{Name}
	Value  string
	// Set: the arguments give a value (not absent, not null, not an
	// object or array).
	Set bool
}

// ParamHeaders are the x-mcp-header annotations of a tool's inputSchema,
// read once: a server that processes the body checks every call's
// Mcp-Param-* headers against them. A ParamHeaders is immutable.
type ParamHeaders struct {
	params []paramHeader
	err    error // the annotations are invalid
}

// ReadParamHeaders reads a tool's x-mcp-header annotations.
func ReadParamHeaders(inputSchema json.RawMessage) *ParamHeaders {
	params, err := toolHeaders(inputSchema)
	return &ParamHeaders{params: params, err: err}
}

// Values returns, for each annotation, the header value a call with args
// carries. An invalid annotation is an error.
func (p *ParamHeaders) Values(args json.RawMessage) ([]ParamValue, error) {
	if p.err != nil {
		return nil, p.err
	}
	if len(p.params) == 0 {
		return nil, nil
	}
	out := make([]ParamValue, 0, len(p.params))
	for _, h := range p.params {
		v, ok := h.value(args)
		out = append(out, ParamValue{Header: headerParamPrefix + h.Name, Value: v, Set: ok})
	}
	return out, nil
}
