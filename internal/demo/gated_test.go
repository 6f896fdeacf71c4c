package demo

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGatedLegacy: a legacy call is refused with -32042 and the gate's
// URL elicitation until the gate completes; the completion is announced
// with notifications/elicitation/complete; then the tool answers.
func TestGatedLegacy(t *testing.T) {
	p := startPeer(t, nil)
	args := `{"gate":"a","completeAfter":0.2,"notify":true}`
	e := rpcError(t, p.call("1", callReq("1", "gated", args, "")))
	want := `{"elicitations":[{"mode":"url","elicitationId":"gate-a","url":"https://example.test/connect?gate=a&from=demo","message":"Connect your example.test account (gate a) to use this tool."}]}`
	if e.Code != -32042 || string(e.Data) != want {
		t.Fatalf("first call: %d %s, want -32042 %s", e.Code, e.Data, want)
	}
	if n := p.msg(); n.Method != "notifications/elicitation/complete" || string(n.Params) != `{"elicitationId":"gate-a"}` {
		t.Fatalf("want the completion, got %s", n.Encode())
	}
	out := decodeTool(t, p.call("2", callReq("2", "gated", args, "")))
	if out.IsError || string(out.StructuredContent) != `{"gate":"a","refused":1}` {
		t.Fatalf("after the gate: %+v", out)
	}
}

// TestGatedModern: a 2026-07-28 call gets input_required with the URL
// elicitation (no elicitationId), never -32042; completeAfter 0 lets the
// retry through.
func TestGatedModern(t *testing.T) {
	p := startPeer(t, nil)
	m := p.call("1", callReq("1", "gated", `{"gate":"b"}`, modernMeta("")))
	res := string(result(t, m))
	if !strings.Contains(res, `"resultType":"input_required"`) || strings.Contains(res, "elicitationId") ||
		!strings.Contains(res, `"gate":{"method":"elicitation/create","params":{"mode":"url","url":"https://example.test/connect?gate=b&from=demo"`) {
		t.Fatalf("first call %s", res)
	}
	var ir struct{ RequestState string }
	_ = json.Unmarshal(m.Result, &ir)
	m = p.call("2", req("2", "tools/call", `{"name":"gated","arguments":{"gate":"b"},"_meta":`+modernMeta("")+
		`,"inputResponses":{"gate":{"action":"accept"}},"requestState":"`+ir.RequestState+`"}`))
	if out := decodeTool(t, m); out.IsError || string(out.StructuredContent) != `{"gate":"b","refused":1}` {
		t.Fatalf("retry %s", m.Result)
	}
}
