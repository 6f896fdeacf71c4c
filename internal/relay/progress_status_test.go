package relay

import (
	"encoding/json"
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// FuzzProgressStatus: a call's status shows the total and message of its
// progress exactly as decoding the params into mcp.ProgressParams reads
// them, whatever the upstream's types, duplicates or case.
func FuzzProgressStatus(f *testing.F) {
	for _, s := range []string{
		`{"progressToken":"mcpx-1","progress":1,"total":200,"message":"step 1"}`,
		`{"progress":1}`,
		`{"progress":1,"total":null,"message":null}`,
		`{"progress":1,"total":"x","message":5}`,
		`{"progress":1,"total":1e400}`,
		`{"progress":1,"total":1,"total":"x","message":"a","message":"b"}`,
		`{"progress":1,"Total":3,"MESSAGE":"m"}`,
		`{"progress":1,"meſſage":"long s","total":-0.5e2}`,
		`{"progress":1,"message":"\u00e9\ud800\n","total":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if !json.Valid(params) {
			return
		}
		obj, err := jsonrpc.ParseObject(params)
		if err != nil {
			return
		}
		total, message := progressStatus(obj)
		var want mcp.ProgressParams
		_ = json.Unmarshal(params, &want)
		if (total == nil) != (want.Total == nil) || total != nil && *total != *want.Total || message != want.Message {
			t.Fatalf("progressStatus(%s) = %v, %q; encoding/json: %v, %q", params, ptr(total), message, ptr(want.Total), want.Message)
		}
	})
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
