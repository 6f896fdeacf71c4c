package demo

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Request headers of Streamable HTTP, as the spec spells them.
const (
	hdrProtocolVersion = "MCP-Protocol-Version"
	hdrSessionID       = "Mcp-Session-Id"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	hdrParamPrefix     = "Mcp-Param-"
	hdrLastEventID     = "Last-Event-ID"
)

// loggedHeaders are the request headers the wire log shows, besides
// Mcp-Param-*, in this order.
var loggedHeaders = []string{"Accept", "Origin", hdrSessionID, hdrProtocolVersion, hdrMethod, hdrName, hdrLastEventID}

// wireHeaders returns the wire log's lines for r: "H METHOD PATH", then one
// "H Name: value" line per header that matters, values as sent.
func wireHeaders(r *http.Request) []string {
	lines := []string{"H " + r.Method + " " + r.URL.Path}
	add := func(name string, values []string) {
		for _, v := range values {
			lines = append(lines, "H "+name+": "+v)
		}
	}
	for _, name := range loggedHeaders {
		add(name, r.Header.Values(name))
	}
	for _, name := range paramHeaderNames(r) {
		add(name, r.Header[name])
	}
	return lines
}

// paramHeaderNames returns the Mcp-Param-* header names of r, sorted, in
// Go's canonical spelling.
func paramHeaderNames(r *http.Request) []string {
	var names []string
	for name := range r.Header {
		if len(name) > len(hdrParamPrefix) && strings.EqualFold(name[:len(hdrParamPrefix)], hdrParamPrefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// recordedHeaders returns the headers that matter for the record:
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-*, base64
// sentinels decoded (a value that does not decode is kept as sent); nil if
// there are none.
func recordedHeaders(r *http.Request) map[string]string {
	out := map[string]string{}
	for _, name := range []string{hdrProtocolVersion, hdrMethod} {
		if v := r.Header.Values(name); len(v) > 0 {
			out[name] = v[0]
		}
	}
	names := append([]string{hdrName}, paramHeaderNames(r)...)
	for _, name := range names {
		if v := r.Header.Values(name); len(v) > 0 {
			out[name] = v[0]
			if d, err := decodeHeaderValue(v[0]); err == nil {
				out[name] = d
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// decodeHeaderValue checks a Mcp-Name or Mcp-Param-* value and decodes the
// base64 sentinel, =?base64?...?= (2026-07-28 streamable-http.mdx, "Value
// Encoding").
func decodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", fmt.Errorf("invalid character %#x", c)
		}
	}
	const prefix, suffix = "=?base64?", "?="
	if len(v) < len(prefix)+len(suffix) || !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil {
		return "", fmt.Errorf("invalid base64 in %q: %v", v, err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("base64 value %q is not UTF-8", v)
	}
	return string(b), nil
}

// headerMismatch is the 2026-07-28 HeaderMismatch error (HTTP 400).
func headerMismatch(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(mcp.CodeHeaderMismatch, "Header mismatch: "+format, args...)
}

// singleHeader returns the one value of header name, or a HeaderMismatch
// error if it is missing (when required) or repeated.
func singleHeader(r *http.Request, name string, required bool) (string, bool, *jsonrpc.Error) {
	v := r.Header.Values(name)
	switch {
	case len(v) == 0 && required:
		return "", false, headerMismatch("missing %s header", name)
	case len(v) == 0:
		return "", false, nil
	case len(v) > 1:
		return "", false, headerMismatch("%s header sent %d times", name, len(v))
	}
	return v[0], true, nil
}

// checkModernHeaders validates the standard headers of a 2026-07-28 request
// against its body: MCP-Protocol-Version (equal to _meta's
// protocolVersion, version), Mcp-Method and, for tools/call, resources/read
// and prompts/get, Mcp-Name (decoded).
func checkModernHeaders(r *http.Request, req *request, version string) *jsonrpc.Error {
	hv, _, err := singleHeader(r, hdrProtocolVersion, true)
	if err != nil {
		return err
	}
	if hv != version {
		return headerMismatch("%s header value %q does not match body value %q", hdrProtocolVersion, hv, version)
	}
	method, _, err := singleHeader(r, hdrMethod, true)
	if err != nil {
		return err
	}
	if method != req.msg.Method {
		return headerMismatch("%s header value %q does not match body value %q", hdrMethod, method, req.msg.Method)
	}
	field := ""
	switch req.msg.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		field = "name"
	case mcp.MethodResourcesRead:
		field = "uri"
	default:
		return nil
	}
	raw, _, err := singleHeader(r, hdrName, true)
	if err != nil {
		return err
	}
	name, derr := decodeHeaderValue(raw)
	if derr != nil {
		return headerMismatch("%s header: %v", hdrName, derr)
	}
	body, _ := stringParam(req.msg.Params, field)
	if name != body {
		return headerMismatch("%s header value %q does not match body value %q", hdrName, name, body)
	}
	return nil
}

// stringParam returns params[key] if it is a string.
func stringParam(params json.RawMessage, key string) (string, bool) {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return "", false
	}
	raw, ok := obj.Get(key)
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// headerParam is one x-mcp-header annotation of a tool's inputSchema.
type headerParam struct {
	path []string // property names from the schema root
	name string   // the header is Mcp-Param-<name>
	typ  string   // string, integer or boolean
}

// headerParams returns the x-mcp-header annotations of a tool definition,
// or an error if one breaks the rules of 2026-07-28 streamable-http.mdx
// ("Schema Extension"): a token name, unique ignoring case, on a string,
// integer or boolean property reached from the root through "properties"
// alone.
func headerParams(def string) ([]headerParam, error) {
	var d struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(def), &d); err != nil {
		return nil, err
	}
	var out []headerParam
	seen := map[string]bool{}
	var walk func(schema json.RawMessage, path []string) error
	walk = func(schema json.RawMessage, path []string) error {
		var s map[string]json.RawMessage
		if json.Unmarshal(schema, &s) != nil {
			return nil // not an object schema: nothing to read
		}
		if raw, ok := s["x-mcp-header"]; ok {
			if len(path) == 0 {
				return errors.New("x-mcp-header on the schema root")
			}
			p, err := annotation(raw, s["type"], path)
			if err != nil {
				return err
			}
			if seen[strings.ToLower(p.name)] {
				return fmt.Errorf("x-mcp-header %q is not unique", p.name)
			}
			seen[strings.ToLower(p.name)] = true
			out = append(out, p)
		}
		for _, key := range slices.Sorted(maps.Keys(s)) {
			if key == "properties" || key == "x-mcp-header" {
				continue
			}
			if hasAnnotation(s[key]) {
				return fmt.Errorf("x-mcp-header under %q of %s, not reachable through properties alone", key, strings.Join(path, "."))
			}
		}
		var props map[string]json.RawMessage
		if raw, ok := s["properties"]; ok && json.Unmarshal(raw, &props) == nil {
			for _, name := range slices.Sorted(maps.Keys(props)) {
				if err := walk(props[name], append(slices.Clip(path), name)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(d.InputSchema, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// annotation reads one x-mcp-header value on the property at path.
func annotation(raw, typ json.RawMessage, path []string) (headerParam, error) {
	p := headerParam{path: path}
	if err := json.Unmarshal(raw, &p.name); err != nil {
		return p, fmt.Errorf("x-mcp-header of %s is not a string", strings.Join(path, "."))
	}
	if p.name == "" || strings.IndexFunc(p.name, func(c rune) bool { return !isTokenChar(c) }) >= 0 {
		return p, fmt.Errorf("x-mcp-header %q is not an HTTP token", p.name)
	}
	if json.Unmarshal(typ, &p.typ) != nil || p.typ != "string" && p.typ != "integer" && p.typ != "boolean" {
		return p, fmt.Errorf("x-mcp-header %q on a property of type %s, not string, integer or boolean", p.name, typ)
	}
	return p, nil
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c rune) bool {
	return c < 0x7f && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune("!#$%&'*+-.^_`|~", c))
}

// hasAnnotation reports whether an x-mcp-header member appears anywhere in v.
func hasAnnotation(v json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) == nil {
		if _, ok := obj["x-mcp-header"]; ok {
			return true
		}
		for _, m := range obj {
			if hasAnnotation(m) {
				return true
			}
		}
		return false
	}
	var arr []json.RawMessage
	if json.Unmarshal(v, &arr) == nil {
		return slices.ContainsFunc(arr, hasAnnotation)
	}
	return false
}

// checkParamHeaders validates the Mcp-Param-* headers of a tools/call of a
// tool with x-mcp-header annotations against its arguments: a value present
// (not null) needs its header, equal after decoding (integers compared as
// numbers); an absent one must have none.
func checkParamHeaders(r *http.Request, params []headerParam, args json.RawMessage) *jsonrpc.Error {
	for _, p := range params {
		header := hdrParamPrefix + p.name
		val, present := valueAt(args, p.path)
		raw, sent, err := singleHeader(r, header, present)
		switch {
		case err != nil:
			return err
		case !present && sent:
			return headerMismatch("%s header sent, but the arguments have no %s", header, strings.Join(p.path, "."))
		case !present:
			continue
		}
		got, derr := decodeHeaderValue(raw)
		if derr != nil {
			return headerMismatch("%s header: %v", header, derr)
		}
		if !paramMatches(p.typ, val, got) {
			return headerMismatch("%s header value %q does not match body value %s", header, got, val)
		}
	}
	return nil
}

// valueAt returns the value at a property path of args; false if it is
// absent or null.
func valueAt(args json.RawMessage, path []string) (json.RawMessage, bool) {
	v := args
	for _, key := range path {
		obj, err := jsonrpc.ParseObject(v)
		if err != nil {
			return nil, false
		}
		if v, _ = obj.Get(key); v == nil {
			return nil, false
		}
	}
	return v, len(v) > 0 && string(v) != "null"
}

// paramMatches compares a decoded header value with a body value of the
// annotated type. A body value of another type never matches.
func paramMatches(typ string, body json.RawMessage, header string) bool {
	switch typ {
	case "string":
		var s string
		return json.Unmarshal(body, &s) == nil && s == header
	case "integer":
		b, err1 := strconv.ParseFloat(string(body), 64)
		h, err2 := strconv.ParseFloat(header, 64)
		return err1 == nil && err2 == nil && b == h
	case "boolean":
		return (string(body) == "true" || string(body) == "false") && string(body) == header
	}
	return false
}
