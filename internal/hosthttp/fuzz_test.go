package hosthttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// FuzzHeaderChecks: the header decoders and checks on their own. A value
// in the base64 sentinel decodes to what was encoded; a 2026-07-28 request
// passes checkModern only if its headers say exactly what its body does;
// Access passes a request with a token only if it carried that token; and
// Accept parsing never fails.
func FuzzHeaderChecks(f *testing.F) {
	f.Add("tools/call", "2026-07-28", "tools/call", "x", []byte(`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`), "127.0.0.1:7777", "http://localhost:1", "Bearer tok", "application/json;q=0.5, text/*")
	f.Add("resources/read", "2026-07-28", "resources/read", "=?base64?ZmlsZTovL3g=?=", []byte(`{"uri":"file://x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`), "[::1]:7777", "null", "bearer  tok ", "*/*;q=0")
	f.Add("ping", "2025-11-25", "Ping", "", []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`), "evil.example:7777", "https://evil.example", "Basic x", "")
	f.Fuzz(func(t *testing.T, method, version, methodHdr, nameHdr string, params []byte, host, origin, auth, acceptHdr string) {
		// The sentinel round trip.
		enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(nameHdr)) + "?="
		if got, err := DecodeHeaderValue(enc); err != nil || got != nameHdr {
			t.Fatalf("DecodeHeaderValue(%q) = %q, %v; want %q", enc, got, err, nameHdr)
		}
		_, _ = DecodeHeaderValue(nameHdr)
		ParseAccept([]string{acceptHdr})

		r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
		r.Host = host
		for k, v := range map[string]string{"Origin": origin, "Authorization": auth} {
			if v != "" {
				r.Header[k] = []string{v}
			}
		}
		a := Access{Addr: "127.0.0.1:7777", Tokens: testTokens{"tok": ""}}
		if a.Decide(r).Status == 0 && !strings.Contains(auth, "tok") {
			t.Fatalf("Access passed Authorization %q without the token", auth)
		}

		if !isJSONObject(params) {
			return
		}
		msg := jsonrpc.NewRequest(jsonrpc.NewIntID(1), method, params)
		hdr := http.Header{}
		hdr[HeaderMethod] = []string{methodHdr}
		hdr[HeaderName] = []string{nameHdr}
		status, rpcErr := checkModern(hdr, msg, parseParams(msg), version, func(string) bool { return true })
		if (status == 0) != (rpcErr == nil) {
			t.Fatalf("checkModern: status %d with error %v", status, rpcErr)
		}
		if rpcErr != nil {
			return
		}
		meta := metaOf(msg)
		v, _ := mcp.MetaString(meta, mcp.MetaProtocolVersion)
		if v != version || !mcp.IsModern(v) || strings.TrimSpace(methodHdr) != method {
			t.Fatalf("checkModern passed version %q (header %q), method %q (header %q)", v, version, method, methodHdr)
		}
		if key := nameParam(method); key != "" {
			body, inBody := paramString(msg, key)
			got, err := DecodeHeaderValue(strings.TrimSpace(nameHdr))
			if inBody && (err != nil || got != body) {
				t.Fatalf("checkModern passed Mcp-Name %q for params.%s %q", nameHdr, key, body)
			}
		}
	})
}

// isJSONObject reports whether b is one valid JSON object, as every
// decoded request's params are.
func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	_, err := jsonrpc.Decode(append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`), b...), '}'))
	return err == nil
}

// paramString returns a string member of a request's params, through
// encoding/json: the oracle of checkModern's reading of the name.
func paramString(msg *jsonrpc.Message, key string) (string, bool) {
	params, err := jsonrpc.ParseObject(msg.Params)
	if err != nil {
		return "", false
	}
	raw, ok := params.Get(key)
	if !ok {
		return "", false
	}
	var s *string
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}
