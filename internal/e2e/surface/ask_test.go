package surface

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// Transcripts of what an upstream asks of a host (elicitation, sampling,
// roots), legacy upstream to legacy host; they run in TestTranscript.
func init() { transcriptCases = append(transcriptCases, askTranscriptCases...) }

// waitWire waits until the upstream's wire log holds a line with sub.
func waitWire(t *testing.T, e *mcpxtest.Env, name, sub string) {
	t.Helper()
	deadline := time.Now().Add(harness.TranscriptWait)
	for time.Now().Before(deadline) {
		for _, l := range e.WireLog(name) {
			if strings.Contains(l, sub) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the wire log of %s never held %s:\n%s", name, sub, strings.Join(e.WireLog(name), "\n"))
}

var askTranscriptCases = []transcriptCase{
	{
		name: "ask-legacy",
		header: `A legacy host (2025-11-25) that declared elicitation (form only) and roots
calls the demo's ask tool, which asks four things during the call: a form
elicitation, roots/list, sampling and a URL elicitation (legacy upstream).

mcpx declares elicitation (form, url), sampling and roots upstream. It
relays the two questions the host can answer under ids of its own (1, 2)
and sends the host's answers back under the upstream's ids ("ask-1",
"ask-2"). The two the host did not declare never reach it: mcpx answers
the upstream -32601 itself.`,
		demo: harness.LegacyDemo,
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			harness.AskHost(h, `{"elicitation":{},"roots":{}}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskForm + `,{"method":"roots/list"},` + harness.AskSamp + `,` + harness.AskURL + `]}}}`)
			q := harness.Question(h, "elicitation/create")
			h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
			q = harness.Question(h, "roots/list")
			h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"roots":[{"uri":"file:///work/project","name":"project"}]}}`)
			h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		},
	},
	{
		name: "ask-host-cancels",
		header: `A legacy host cancels its call while the upstream's elicitation waits for
its answer (legacy upstream).

mcpx cancels the upstream call (notifications/cancelled for mcpx's id 3,
the host's reason), then withdraws its question from the host
(notifications/cancelled for mcpx's question id 1) and answers the
upstream's question with an error, in that order. The host gets no
response to the cancelled call.`,
		demo: harness.LegacyDemo,
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			harness.AskHost(h, `{"elicitation":{}}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskForm + `]}}}`)
			harness.Question(h, "elicitation/create")
			h.SendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"the user closed the dialog"}}`)
			h.WaitFor(harness.TranscriptWait, "the withdrawal of the question", func(r mcpxtest.Received) bool {
				return r.Msg.Method == "notifications/cancelled"
			})
			waitWire(t, e, "demo", `"id":"ask-1","error"`)
			h.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			h.Result(jsonrpc.NewIntID(3), harness.TranscriptWait)
		},
	},
	{
		name: "ask-upstream-withdraws",
		header: `The upstream cancels its own elicitation while the host has not answered
(the demo's withdrawAfter); legacy host and upstream.

mcpx withdraws the question from the host (notifications/cancelled for
mcpx's id 1, with the upstream's reason) and sends the upstream nothing
for it; the call then ends with the upstream's result.`,
		demo: harness.LegacyDemo,
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			harness.AskHost(h, `{"elicitation":{}}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskForm + `],"withdrawAfter":0.3}}}`)
			h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		},
	},
	{
		name: "ask-url-complete",
		header: `A URL-mode elicitation (legacy host that declared form and url, legacy
upstream): the host accepts, the upstream then sends
notifications/elicitation/complete, which mcpx passes to that host, on the
call's stream, before the result.`,
		demo: harness.LegacyDemo,
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			harness.AskHost(h, `{"elicitation":{"form":{},"url":{}}}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskURL + `],"complete":true}}}`)
			q := harness.Question(h, "elicitation/create")
			h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"action":"accept"}}`)
			h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		},
	},
	{
		name: "ask-modern-passthrough",
		header: `A 2026-07-28 host that declared elicitation (form) calls the demo's ask
tool on a 2026-07-28 upstream (demo -era auto).

mcpx stamps the host's elicitation capability on the upstream request (and
nothing else of the host's). The upstream's input_required reaches the
host with its requestState wrapped in mcpx's seal (bound to the host, the
server, the tool and its arguments; normalised here as SEALED). The host's
retry (a new id, the same arguments, its inputResponses and the sealed
state) goes upstream under a new id of mcpx's, with inputResponses and the
upstream's own requestState byte for byte.`,
		demo: mcpxtest.Demo{Name: "demo"},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"transcript-host","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"x":{}}}}`
			args := `{"asks":[` + harness.AskForm + `]}`
			h.SendRaw(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"demo__ask","arguments":` + args + `,` + meta + `}}`)
			res := h.Result(jsonrpc.NewStringID("c1"), harness.TranscriptWait)
			var ir struct {
				RequestState string `json:"requestState"`
			}
			if err := json.Unmarshal(res, &ir); err != nil || ir.RequestState == "" {
				t.Fatalf("no input_required: %s", res)
			}
			h.SendRaw(`{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"demo__ask","arguments":` + args + `,` + meta +
				`,"inputResponses":{"q0":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + ir.RequestState + `"}}`)
			h.Result(jsonrpc.NewStringID("c2"), harness.TranscriptWait)
		},
	},
	{
		name: "ask-modern-upstream-legacy-host",
		header: `A legacy host (2025-11-25) that declared elicitation (form) and roots
calls the demo's ask tool on a 2026-07-28 upstream (demo -era auto), which
needs two rounds of input.

mcpx stamps the host's elicitation and roots capabilities upstream. Each
input_required becomes a request to the host under mcpx's own id (1, then
2); with the host's answer mcpx retries upstream under a new id, the
original arguments, inputResponses keyed as the upstream asked, and the
upstream's requestState byte for byte. The host never sees input_required:
it gets the final result, without resultType.`,
		demo: mcpxtest.Demo{Name: "demo"},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			harness.AskHost(h, `{"elicitation":{},"roots":{}}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__ask","arguments":{"asks":[` + harness.AskForm + `,{"method":"roots/list"}]}}}`)
			q := harness.Question(h, "elicitation/create")
			h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
			q = harness.Question(h, "roots/list")
			h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"roots":[{"uri":"file:///work/project"}]}}`)
			h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		},
	},
}
