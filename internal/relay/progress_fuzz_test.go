package relay

import (
	"bytes"
	"encoding/json"
	"testing"

	"mcpx/internal/jsonrpc"
)

// FuzzProgress: whatever progress params an upstream sends for a call (one
// per line of the input), what reaches the host is, for each: one JSON
// object, carrying the host's own token byte for byte and every other
// member as the upstream sent it; and over the call, values that strictly
// increase as the host reads them (the spec's MUST), whatever the
// upstream's case, duplicates or types.
func FuzzProgress(f *testing.F) {
	for _, s := range []struct{ token, lines string }{
		{`"host-1"`, "{\"progressToken\":\"mcpx-1\",\"progress\":1}\n{\"progressToken\":\"mcpx-1\",\"progress\":2,\"total\":3,\"message\":\"m\"}"},
		{`12345678901234567890`, "{\"progressToken\":\"mcpx-1\",\"progress\":1.5}\n{\"progress\":1.5}\n{\"progress\":1}\n{\"progress\":2e3}"},
		{`"t"`, "{\"progress\":\"1\"}\n{\"progress\":null}\n{}\n[1]\nnull\n{\"progress\":1,\"progress\":0.5}"},
		{`"t"`, "{\"Progress\":5,\"progress\":1}\n{\"progress\":2,\"PROGRESS\":0}"},
		{`"t"`, "{\"progress\":5}\n{\"progress\":1,\"PROGRESS\":9}"},
		{`"t"`, "{\"progress\":1e400}\n{\"progress\":-1e400}\n{\"progress\":1,\"_meta\":{\"x\":1}}"},
	} {
		f.Add([]byte(s.token), []byte(s.lines))
	}
	f.Fuzz(func(t *testing.T, token, lines []byte) {
		token = bytes.TrimSpace(token)
		if !json.Valid(token) || len(token) == 0 {
			return
		}
		var sent [][]byte
		st := &callState{call: &Call{HostToken: token, Progress: func(params json.RawMessage) {
			sent = append(sent, append([]byte(nil), params...))
		}}}
		var in [][]byte
		for line := range bytes.SplitSeq(lines, []byte("\n")) {
			if !json.Valid(line) { // the reader hands on valid JSON only
				continue
			}
			in = append(in, line)
			n := len(sent)
			st.onProgress(line)
			if len(sent) == n {
				continue
			}
			out := sent[len(sent)-1]
			got, err := jsonrpc.ParseObject(out)
			if err != nil || !json.Valid(out) {
				t.Fatalf("the host got %q for %q: not a JSON object", out, line)
			}
			if tok, _ := got.Get("progressToken"); !bytes.Equal(tok, token) {
				t.Fatalf("the host got token %s, want its own %s: %s", tok, token, out)
			}
			orig, _ := jsonrpc.ParseObject(line)
			for _, k := range orig.Keys() {
				if k == "progressToken" {
					continue
				}
				a, _ := orig.Get(k)
				b, _ := got.Get(k)
				if !bytes.Equal(a, b) {
					t.Fatalf("member %q changed on its way to the host: %s -> %s", k, a, b)
				}
			}
		}
		// What the host reads, as a strict (case-sensitive) reader does.
		prev, first := 0.0, true
		for _, out := range sent {
			obj, _ := jsonrpc.ParseObject(out)
			raw, ok := obj.Get("progress")
			var v float64
			if !ok || json.Unmarshal(raw, &v) != nil {
				t.Fatalf("the host got progress without a numeric \"progress\": %s", out)
			}
			if !first && v <= prev {
				t.Fatalf("the host's progress went from %v to %v: %s\nall sent: %q\ninput: %q", prev, v, out, sent, in)
			}
			prev, first = v, false
		}
	})
}
