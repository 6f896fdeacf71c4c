package upstream

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/jsonrpc"
)

// TestEncodeHeaderValue: the spec's encoding examples, and the edges of the
// plain set.
func TestEncodeHeaderValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// The table of basic/transports/streamable-http, "Value Encoding".
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		// Edges.
		{"", ""},
		{"a b", "a b"},
		{"tab\there", "=?base64?dGFiCWhlcmU=?="},
		{"trailing ", "=?base64?dHJhaWxpbmcg?="},
		{"~!@#$%^&*()", "~!@#$%^&*()"},
		{"=?base64?", "=?base64?"}, // not the whole sentinel: plain
		{"del\x7f", "=?base64?ZGVsfw==?="},
	} {
		if got := encodeHeaderValue(tc.in); got != tc.want {
			t.Errorf("encodeHeaderValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestToolHeaders: which x-mcp-header annotations make a tool definition
// valid (and what they mirror), and which reject it.
func TestToolHeaders(t *testing.T) {
	valid := []struct {
		name, schema string
		want         []paramHeader
	}{
		{"none", `{"type":"object","properties":{"q":{"type":"string"}}}`, nil},
		{"no schema members", `{}`, nil},
		{"the spec's example", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}}}`,
			[]paramHeader{{Name: "Region", Path: []string{"region"}}}},
		{"integer and boolean", `{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`,
			[]paramHeader{{Name: "B", Path: []string{"b"}}, {Name: "N", Path: []string{"n"}}}},
		{"nullable string", `{"type":"object","properties":{"s":{"type":["string","null"],"x-mcp-header":"S"}}}`,
			[]paramHeader{{Name: "S", Path: []string{"s"}}}},
		{"nested through properties", `{"type":"object","properties":{"outer":{"type":"object","properties":{"inner":{"type":"string","x-mcp-header":"Inner"}}}}}`,
			[]paramHeader{{Name: "Inner", Path: []string{"outer", "inner"}}}},
		{"token characters", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X_Tenant.id~!#$%&'*+^|1"}}}`,
			[]paramHeader{{Name: "X_Tenant.id~!#$%&'*+^|1", Path: []string{"a"}}}},
		{"keyword as data, not annotation", `{"type":"object","properties":{"a":{"type":"string","default":{"x-mcp-header":"D"},"enum":[{"x-mcp-header":"E"}]}}}`, nil},
		{"a property named x-mcp-header", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, nil},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toolHeaders(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("toolHeaders: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
	invalid := []struct{ name, schema, reason string }{
		{"empty", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`, "empty"},
		{"not a string", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":7}}}`, "not a string"},
		{"space", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`, "not an HTTP header name token"},
		{"colon", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`, "not an HTTP header name token"},
		{"non-ASCII", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`, "not an HTTP header name token"},
		{"control character", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}`, "not an HTTP header name token"},
		{"CRLF", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"A\r\nB"}}}`, "not an HTTP header name token"},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`, "used twice"},
		{"duplicate in another case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, "used twice"},
		{"number", `{"type":"object","properties":{"p":{"type":"number","x-mcp-header":"P"}}}`, "not integer, string or boolean"},
		{"object", `{"type":"object","properties":{"d":{"type":"object","x-mcp-header":"Data"}}}`, "not integer, string or boolean"},
		{"array", `{"type":"object","properties":{"i":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`, "not integer, string or boolean"},
		{"null", `{"type":"object","properties":{"n":{"type":"null","x-mcp-header":"Nil"}}}`, "not integer, string or boolean"},
		{"no type", `{"type":"object","properties":{"n":{"x-mcp-header":"N"}}}`, "not integer, string or boolean"},
		{"string or number", `{"type":"object","properties":{"n":{"type":["string","number"],"x-mcp-header":"N"}}}`, "not integer, string or boolean"},
		{"on the root", `{"type":"object","x-mcp-header":"Root"}`, "reachable"},
		{"under items", `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"object","properties":{"h":{"type":"string","x-mcp-header":"H"}}}}}}`, "reachable"},
		{"under oneOf", `{"type":"object","oneOf":[{"properties":{"h":{"type":"string","x-mcp-header":"H"}}}]}`, "reachable"},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"H"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, "reachable"},
		{"under if", `{"type":"object","if":{"properties":{"h":{"type":"string","x-mcp-header":"H"}}}}`, "reachable"},
		{"under additionalProperties", `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"H"}}`, "reachable"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toolHeaders(json.RawMessage(tc.schema))
			if err == nil {
				t.Fatalf("toolHeaders = %+v, want an error saying %q", got, tc.reason)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not say %q", err, tc.reason)
			}
		})
	}
}

// TestParamHeaderValues: the value at the exact path, converted and encoded;
// no header when the value is absent, null, or not a primitive.
func TestParamHeaderValues(t *testing.T) {
	params := []paramHeader{
		{Name: "Region", Path: []string{"region"}},
		{Name: "Priority", Path: []string{"priority"}},
		{Name: "Verbose", Path: []string{"verbose"}},
		{Name: "Empty", Path: []string{"empty"}},
		{Name: "Inner", Path: []string{"outer", "inner"}},
		{Name: "Greeting", Path: []string{"greeting"}},
		{Name: "method", Path: []string{"m"}},
	}
	for _, tc := range []struct {
		name, args string
		want       map[string]string
	}{
		{"all present", `{"region":"us-west1","priority":42,"verbose":false,"empty":"","outer":{"inner":"x"},"greeting":"Hello, 世界","m":"test-method"}`,
			map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "false",
				"Mcp-Param-Empty": "", "Mcp-Param-Inner": "x", "Mcp-Param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?=",
				"Mcp-Param-method": "test-method"}},
		{"absent and null", `{"region":null,"outer":{}}`, map[string]string{}},
		{"no arguments", ``, map[string]string{}},
		{"not primitives", `{"region":{"a":1},"priority":[1],"outer":"flat"}`, map[string]string{}},
		{"integral float and big integer", `{"priority":4.2e1,"region":"a"}`, map[string]string{"Mcp-Param-Priority": "42", "Mcp-Param-Region": "a"}},
		{"negative", `{"priority":-7,"verbose":true}`, map[string]string{"Mcp-Param-Priority": "-7", "Mcp-Param-Verbose": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params0 := `{"name":"t"}`
			if tc.args != "" {
				params0 = `{"name":"t","arguments":` + tc.args + `}`
			}
			msg := jsonrpc.NewRequest(jsonrpc.NewIntID(1), "tools/call", json.RawMessage(params0))
			h := http.Header{}
			setMetadataHeaders(h, "2026-07-28", msg.Method, parsedParams(msg), params)
			got := map[string]string{}
			for k, v := range h {
				if strings.HasPrefix(k, headerParamPrefix) {
					got[k] = v[0]
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Mcp-Param headers (-want +got):\n%s", diff)
			}
			if h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "t" || h.Get("MCP-Protocol-Version") != "2026-07-28" {
				t.Errorf("standard headers: %v", h)
			}
		})
	}
}

// TestMcpName: the name header per method, encoded like parameter values.
func TestMcpName(t *testing.T) {
	for _, tc := range []struct{ method, params, want string }{
		{"tools/call", `{"name":"get_weather"}`, "get_weather"},
		{"resources/read", `{"uri":"file:///projects/myapp/config.json"}`, "file:///projects/myapp/config.json"},
		{"prompts/get", `{"name":"résumé"}`, "=?base64?csOpc3Vtw6k=?="},
		{"tools/list", `{"name":"x"}`, ""},
		{"tools/call", `{"name":7}`, ""},
		{"tools/call", `{"name":"a\u00e9"}`, "=?base64?YcOp?="},
	} {
		h := http.Header{}
		msg := jsonrpc.NewRequest(jsonrpc.NewIntID(1), tc.method, json.RawMessage(tc.params))
		setMetadataHeaders(h, "2026-07-28", msg.Method, parsedParams(msg), nil)
		if got := h.Get("Mcp-Name"); got != tc.want {
			t.Errorf("%s %s: Mcp-Name = %q, want %q", tc.method, tc.params, got, tc.want)
		}
		if got := h.Get("Mcp-Method"); got != tc.method {
			t.Errorf("Mcp-Method = %q, want %q", got, tc.method)
		}
	}
}

// parsedParams is a message's params as the transport parses them: nil
// when not an object.
func parsedParams(msg *jsonrpc.Message) *jsonrpc.Object {
	obj, _ := jsonrpc.ParseObject(msg.Params)
	return obj
}
