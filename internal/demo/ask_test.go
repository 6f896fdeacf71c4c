package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpx/internal/jsonrpc"
)

const elicitQ = `{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`

// TestAskLegacy: the question goes out on the call's stream with the
// demo's own id, the client's answer comes back in the result, and a
// question left unanswered past withdrawAfter is cancelled by the server.
func TestAskLegacy(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "ask", `{"asks":[`+elicitQ+`,{"method":"roots/list"}],"withdrawAfter":0.2}`, ""))
	q := p.msg()
	if q.Method != "elicitation/create" || q.ID.String() != `"ask-1"` {
		t.Fatalf("first question %s", q.Encode())
	}
	p.send(`{"jsonrpc":"2.0","id":"ask-1","result":{"action":"accept","content":{"name":"Ada"}}}`)
	q = p.msg()
	if q.Method != "roots/list" || q.ID.String() != `"ask-2"` {
		t.Fatalf("second question %s", q.Encode())
	}
	// Unanswered: withdrawn after 0.2 s, then the result.
	notes, m := p.until("1")
	if len(notes) != 1 || notes[0].Method != "notifications/cancelled" || !strings.Contains(string(notes[0].Params), `"requestId":"ask-2"`) {
		t.Fatalf("want the withdrawal of ask-2, got %v", notes)
	}
	out := decodeTool(t, m)
	var s struct{ Answers []json.RawMessage }
	if err := json.Unmarshal(out.StructuredContent, &s); err != nil || len(s.Answers) != 2 ||
		string(s.Answers[0]) != `{"result":{"action":"accept","content":{"name":"Ada"}}}` || !strings.Contains(string(s.Answers[1]), "withdrawn") {
		t.Fatalf("answers %s", out.StructuredContent)
	}
}

// TestAskModern: one input_required round per question, the answers so
// far carried in requestState, every answer in the final result.
func TestAskModern(t *testing.T) {
	p := startPeer(t, nil)
	args := `{"asks":[` + elicitQ + `,{"method":"roots/list"}]}`
	m := p.call("1", callReq("1", "ask", args, modernMeta("")))
	var r struct {
		ResultType    string
		InputRequests map[string]json.RawMessage
		RequestState  string
	}
	if err := json.Unmarshal(result(t, m), &r); err != nil || r.ResultType != "input_required" || r.InputRequests["q0"] == nil {
		t.Fatalf("first round %s", m.Result)
	}
	retry := func(id, key, answer, state string) *jsonrpc.Message {
		return p.call(id, req(id, "tools/call", `{"name":"ask","arguments":`+args+`,"_meta":`+modernMeta("")+
			`,"inputResponses":{"`+key+`":`+answer+`},"requestState":"`+state+`"}`))
	}
	m = retry("2", "q0", `{"action":"decline"}`, r.RequestState)
	if err := json.Unmarshal(result(t, m), &r); err != nil || r.ResultType != "input_required" || r.InputRequests["q1"] == nil {
		t.Fatalf("second round %s", m.Result)
	}
	m = retry("3", "q1", `{"roots":[]}`, r.RequestState)
	out := decodeTool(t, m)
	if out.ResultType != "complete" || !strings.Contains(string(out.StructuredContent), `"answers":[{"action":"decline"},{"roots":[]}]`) {
		t.Fatalf("final round %s", m.Result)
	}
	if rpcError(t, retry("4", "q1", `{}`, "not-state")).Code != -32602 {
		t.Error("a forged requestState was not refused with -32602")
	}
}

// TestAskLater: ask_later works first (nothing on the stream until then),
// then asks its one question; the answer, or the error the client sent,
// comes back in the result. 2026-07-28: input_required after the work,
// and the retry answers at once.
func TestAskLater(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "ask_later", `{"seconds":0.05,"message":"Which colour?"}`, ""))
	q := p.msg()
	if q.Method != "elicitation/create" || q.ID.String() != `"ask-1"` || !strings.Contains(string(q.Params), `"message":"Which colour?"`) {
		t.Fatalf("question %s", q.Encode())
	}
	p.send(`{"jsonrpc":"2.0","id":"ask-1","result":{"action":"accept","content":{"answer":"teal"}}}`)
	_, m := p.until("1")
	if out := decodeTool(t, m); !strings.Contains(string(out.StructuredContent), `{"result":{"action":"accept","content":{"answer":"teal"}}}`) {
		t.Fatalf("result %s", out.StructuredContent)
	}
	p.send(callReq("2", "ask_later", `{"seconds":0}`, ""))
	q = p.msg()
	p.send(`{"jsonrpc":"2.0","id":` + string(q.ID.Raw()) + `,"error":{"code":-32603,"message":"mcpx cannot put this to job job_x"}}`)
	_, m = p.until("2")
	if out := decodeTool(t, m); !strings.Contains(string(out.StructuredContent), `"error":{"code":-32603,"message":"mcpx cannot put this to job job_x"}`) {
		t.Fatalf("result %s", out.StructuredContent)
	}

	m = p.call("3", callReq("3", "ask_later", `{"seconds":0.05}`, modernMeta("")))
	var r struct {
		ResultType    string
		InputRequests map[string]json.RawMessage
		RequestState  string
	}
	if err := json.Unmarshal(result(t, m), &r); err != nil || r.ResultType != "input_required" || r.InputRequests["q0"] == nil {
		t.Fatalf("modern first round %s", m.Result)
	}
	m = p.call("4", req("4", "tools/call", `{"name":"ask_later","arguments":{"seconds":600},"_meta":`+modernMeta("")+
		`,"inputResponses":{"q0":{"action":"decline"}},"requestState":"`+r.RequestState+`"}`))
	if out := decodeTool(t, m); !strings.Contains(string(out.StructuredContent), `{"action":"decline"}`) {
		t.Fatalf("modern retry %s", out.StructuredContent)
	}
}
