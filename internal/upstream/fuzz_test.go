package upstream

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// fuzzTransport is a transport that takes every message and goes nowhere.
type fuzzTransport struct{ sent int }

func (f *fuzzTransport) send(*Request, *jsonrpc.Message) error { f.sent++; return nil }
func (f *fuzzTransport) cancel(*Request, string) bool          { return true }
func (f *fuzzTransport) stop(time.Duration)                    {}
func (f *fuzzTransport) pid() int                              { return 0 }
func (f *fuzzTransport) stderrTail() string                    { return "" }

// FuzzConnDeliver: whatever lines an upstream sends, the connection never
// panics, answers each of mcpx's requests at most once, hands each
// request's progress only to it (by the token mcpx minted for it, exact),
// and nothing to a request once it is answered or forgotten.
func FuzzConnDeliver(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"mcpx-1\",\"progress\":1}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"mcpx-1\",\"progress\":2}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"mcpx-2\",\"progress\":1}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-1,\"message\":\"x\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"mcpx-01\",\"progress\":1}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"mcpx-3\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"sampling/createMessage\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}",
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":1.0,"result":{}}`,
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]",
	} {
		f.Add([]byte(s), byte(0))
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, lines []byte, forget byte) {
		c := newConn("fuzz", log)
		c.t = &fuzzTransport{}
		notified := 0
		c.onNotify = func(*jsonrpc.Message) { notified++ }
		const n = 3
		reqs := make([]*Request, n)
		delivered := make([]int, n)
		for i := range reqs {
			i := i
			r, err := c.Start(mcp.MethodToolsCall, nil, StartOptions{OnProgress: func(params json.RawMessage) {
				r := reqs[i]
				select {
				case <-r.done:
					t.Fatalf("progress for request %d after its answer: %s", r.ID, params)
				default:
				}
				if r.forgotten {
					t.Fatalf("progress for forgotten request %d: %s", r.ID, params)
				}
				obj, err := jsonrpc.ParseObject(params)
				if err != nil {
					t.Fatalf("progress params are not an object: %s", params)
				}
				raw, _ := obj.Get(mcp.MetaProgressToken)
				var tok string
				if json.Unmarshal(raw, &tok) != nil || tok != r.Token {
					t.Fatalf("request %d (token %s) got progress under %s", r.ID, r.Token, raw)
				}
				delivered[i]++
			}})
			if err != nil {
				t.Fatal(err)
			}
			reqs[i] = r
		}
		if forget%4 < n {
			c.Forget(reqs[forget%4])
		}
		r := jsonrpc.NewReader(bytes.NewReader(lines), 1<<16)
		if err := c.readLoop(r); err != io.EOF {
			t.Fatalf("readLoop ended with %v, want io.EOF", err)
		}
		c.fail(fmt.Errorf("end"))
		for _, r := range reqs {
			select {
			case <-r.done:
			default:
				if c.pending[r.ID] == r {
					t.Fatalf("request %d still pending after the connection failed", r.ID)
				}
			}
		}
	})
}

// decodeHeader undoes encodeHeaderValue as a server does (the spec's
// =?base64?...?= sentinel).
func decodeHeader(v string) (string, error) {
	if inner, ok := strings.CutPrefix(v, sentinelStart); ok {
		if inner, ok = strings.CutSuffix(inner, sentinelEnd); ok {
			b, err := base64.StdEncoding.DecodeString(inner)
			return string(b), err
		}
	}
	return v, nil
}

// validHeaderValue reports whether v can go in an HTTP header as it is:
// visible ASCII and spaces, no space at either end.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return v == "" || v[0] != ' ' && v[len(v)-1] != ' '
}

// FuzzMetadataHeaders: whatever a tool's inputSchema and a call's
// arguments and name, the request metadata headers mcpx sends are valid
// header names and values, each decodes (base64 sentinel) to exactly the
// parameter's value, and a schema walk never fails but with an error.
func FuzzMetadataHeaders(f *testing.F) {
	for _, s := range []struct{ schema, args, name string }{
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, `{"region":"eu-west-1"}`, "deploy"},
		{`{"properties":{"a":{"properties":{"b":{"type":["integer","null"],"x-mcp-header":"B"}}}}}`, `{"a":{"b":4.2e1}}`, "n"},
		{`{"properties":{"v":{"type":"boolean","x-mcp-header":"V"},"w":{"type":"string","x-mcp-header":"v"}}}`, `{"v":true}`, "dup"},
		{`{"properties":{"s":{"type":"string","x-mcp-header":"S"}}}`, `{"s":" héllo\n"}`, "=?base64?x?="},
		{`{"oneOf":[{"properties":{"x":{"x-mcp-header":"X"}}}],"items":[true,{"x-mcp-header":1}]}`, `{}`, ""},
		{`{"properties":{"n":{"type":"integer","x-mcp-header":"N"}}}`, `{"n":12345678901234567890}`, "\x00"},
	} {
		f.Add([]byte(s.schema), []byte(s.args), s.name)
	}
	f.Fuzz(func(t *testing.T, schema, args []byte, name string) {
		// A round trip of the name alone, whatever it is.
		enc := encodeHeaderValue(name)
		if !validHeaderValue(enc) {
			t.Fatalf("encodeHeaderValue(%q) = %q: not a valid header value", name, enc)
		}
		if dec, err := decodeHeader(enc); err != nil || dec != name {
			t.Fatalf("encodeHeaderValue(%q) = %q decodes to %q, %v", name, enc, dec, err)
		}
		if !json.Valid(schema) || !json.Valid(args) {
			return // both come out of parsed JSON
		}
		params, err := toolHeaders(schema)
		if err != nil {
			return
		}
		for _, p := range params {
			if !isToken(p.Name) || len(p.Path) == 0 {
				t.Fatalf("toolHeaders gave %+v", p)
			}
		}
		body := jsonrpc.MustMarshal(map[string]any{"name": name, "arguments": json.RawMessage(args)})
		msg := jsonrpc.NewRequest(jsonrpc.NewIntID(1), mcp.MethodToolsCall, body)
		h := http.Header{}
		setMetadataHeaders(h, mcp.Version20260728, msg.Method, parsedParams(msg), params)
		for k, vs := range h {
			if !isToken(k) || len(vs) != 1 || !validHeaderValue(vs[0]) {
				t.Fatalf("header %q: %q", k, vs)
			}
		}
		var inBody struct{ Name string }
		_ = json.Unmarshal(body, &inBody) // the name as JSON carries it (invalid UTF-8 replaced)
		if got, err := decodeHeader(h.Get(headerName)); err != nil || got != inBody.Name {
			t.Fatalf("Mcp-Name %q decodes to %q, %v; want %q", h.Get(headerName), got, err, inBody.Name)
		}
		for _, p := range params {
			want, ok := p.value(args)
			vs, sent := h[headerParamPrefix+p.Name]
			if ok != sent {
				t.Fatalf("parameter %v: value %q, %v, but header sent %v", p.Path, want, ok, sent)
			}
			if !sent {
				continue
			}
			if got, err := decodeHeader(vs[0]); err != nil || got != want {
				t.Fatalf("Mcp-Param-%s %q decodes to %q, %v; want %q", p.Name, vs[0], got, err, want)
			}
		}
	})
}
