package hostserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"mcpx/internal/jsonrpc"
)

// TestWithoutComplete: where withoutComplete takes a result, it returns
// what resultOf returns for a legacy host; where it cannot be sure, it
// declines and resultOf decides.
func TestWithoutComplete(t *testing.T) {
	for _, tc := range []struct {
		res  string
		fast bool
	}{
		{`{"content":[{"type":"text","text":"{\"n\":7}"}],"structuredContent":{"n":7},"resultType":"complete"}`, true},
		{`{"content":[],"isError":true,"resultType":"complete"}`, true},
		{`{"content":[{"type":"text","text":"a \"resultType\" in a string"}],"resultType":"complete"}`, false}, // two
		{`{"resultType":"complete"}`, false},                                                                   // no comma before it
		{`{"content":[],"resultType":"complete","structuredContent":{}}`, false},                               // not last
		{`{"content":[],"resultType":"input_required"}`, false},
		{`{"content":[],"x":{"y":1,"resultType":"complete"}}`, false}, // nested: resultOf keeps it
		{`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"resultType":"complete"}`, false},
		{`{"content":[{"type":"text","text":"\u0041"}],"resultType":"complete"}`, false},
		{`{"content":[], "resultType":"complete"}`, false}, // spaced: not the suffix
	} {
		obj, err := jsonrpc.ParseObject(json.RawMessage(tc.res))
		if err != nil {
			t.Fatalf("%s: %v", tc.res, err)
		}
		want := (&request{}).resultOf(json.RawMessage(tc.res), obj, nil)
		short, ok := withoutComplete([]byte(tc.res))
		if ok != tc.fast {
			t.Errorf("%s: taken %v, want %v", tc.res, ok, tc.fast)
		}
		if ok && !bytes.Equal(short, want) {
			t.Errorf("%s:\n got %s\nwant %s (resultOf)", tc.res, short, want)
		}
		if ok && !json.Valid(short) {
			t.Errorf("%s: %s is not JSON", tc.res, short)
		}
	}
}
