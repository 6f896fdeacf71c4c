package harness

import (
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

const (
	AskInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":"transcript-host","version":"1.0.0"}}}`
	AskForm = `{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	AskURL  = `{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.test/login","elicitationId":"el-7"}}`
	AskSamp = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"2+2?"}}],"maxTokens":5}}`
)

func AskHost(h *mcpxtest.Host, caps string) {
	h.SendRaw(strings.Replace(AskInit, "%s", caps, 1))
	h.Result(jsonrpc.NewIntID(1), TranscriptWait)
	h.SendRaw(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Question waits for the host's n-th request from mcpx with method.
func Question(h *mcpxtest.Host, method string) *jsonrpc.Message {
	return h.WaitFor(TranscriptWait, "a "+method+" request", func(r mcpxtest.Received) bool {
		return r.Msg.IsRequest() && r.Msg.Method == method
	}).Msg
}

var LegacyDemo = mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}}
