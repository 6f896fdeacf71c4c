package surface

import (
	"os"
	"strings"
	"sync"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestAskHTTPUpstreamTwoHosts: two legacy hosts of one daemon call the
// demo's ask tool at the same time on one legacy HTTP upstream session
// (demo -http). Each upstream elicitation arrives on the SSE stream of
// the call that caused it, so each reaches its own host, and each answer
// goes back under the upstream's id (POSTed) to the right call.
func TestAskHTTPUpstreamTwoHosts(t *testing.T) {
	url, record, wire := harness.StartDemoHTTP(t, "-era", "legacy")
	e := mcpxtest.NewEnv(t)
	for from, to := range map[string]string{record: e.RecordPath("demo"), wire: e.WireLogPath("demo")} {
		if err := os.Symlink(from, to); err != nil {
			t.Fatal(err)
		}
	}
	cfg := harness.WriteServersConfig(t, e, map[string]any{"demo": map[string]any{"type": "http", "url": url}})
	hosts := map[string]*mcpxtest.Host{"A": e.StartHost(mcpxtest.Daemon, cfg), "B": e.StartHost(mcpxtest.Daemon, cfg)}
	for _, h := range hosts {
		harness.AskHost(h, `{"elicitation":{}}`)
	}
	// Both calls are in flight upstream before either question is answered.
	for who, h := range hosts {
		q := strings.Replace(harness.AskForm, "Your name?", "Question for "+who, 1)
		h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + q + `]}}}`)
	}
	qs := map[string]*jsonrpc.Message{}
	for who, h := range hosts {
		qs[who] = harness.Question(h, "elicitation/create")
		if !strings.Contains(string(qs[who].Params), "Question for "+who) {
			t.Errorf("host %s was asked %s", who, qs[who].Params)
		}
	}
	var wg sync.WaitGroup
	for who, h := range hosts {
		h.SendRaw(`{"jsonrpc":"2.0","id":` + qs[who].ID.String() + `,"result":{"action":"accept","content":{"name":"answer of ` + who + `"}}}`)
		wg.Go(func() {
			res := h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
			if !strings.Contains(string(res), "answer of "+who) {
				t.Errorf("host %s got %s", who, res)
			}
		})
	}
	wg.Wait()
}
