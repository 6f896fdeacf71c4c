package surface

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// URL-mode elicitation across eras: a legacy upstream's -32042
// (URLElicitationRequiredError) relayed to a legacy host, turned into
// input_required for a 2026-07-28 host; a 2026-07-28 upstream's URL-mode
// input request put to a legacy host; the demo's gated tool is the
// upstream.

// modernMetaCaps is a 2026-07-28 request's _meta with client capabilities caps.
func modernMetaCaps(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"transcript-host","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// callGated sends a 2026-07-28 tools/call of the demo's gated tool with
// args, caps and extra params members, and returns the response.
func callGated(h *mcpxtest.Host, id, args, caps, extra string) *jsonrpc.Message {
	h.SendRaw(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"demo__gated","arguments":` + args + `,` + modernMetaCaps(caps) + extra + `}}`)
	return h.Response(jsonrpc.NewStringID(id), harness.TranscriptWait)
}

// wireWith returns the lines of the upstream's wire log with sub.
func wireWith(e *mcpxtest.Env, name, sub string) []string {
	var out []string
	for _, l := range e.WireLog(name) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

var errorMember = regexp.MustCompile(`"error":\{.*\}\}$`)

const urlCaps = `{"elicitation":{"form":{},"url":{}}}`

// TestURLRequiredLegacyHost: a legacy host gets a legacy upstream's
// -32042 as it is: under the host's own id, with code, message and data
// byte for byte as the upstream wrote them (the URL's & unescaped); its
// retry, once the gate is complete, gets the result.
func TestURLRequiredLegacyHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, harness.LegacyDemo))
		harness.AskHost(h, urlCaps)
		h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__gated","arguments":{"gate":"legacy"}}}`)
		m := h.Response(jsonrpc.NewIntID(2), harness.TranscriptWait)
		if m.Error == nil || m.Error.Code != -32042 {
			t.Fatalf("want -32042, got %s", m.Encode())
		}
		up := wireWith(e, "demo", `"code":-32042`)
		if len(up) != 1 {
			t.Fatalf("upstream -32042 lines: %q", up)
		}
		want := errorMember.FindString(strings.TrimPrefix(up[0], "> "))
		var got string
		for _, l := range h.ReceivedLines() {
			if strings.Contains(l, `"code":-32042`) {
				got = l
			}
		}
		if want == "" || got != `{"jsonrpc":"2.0","id":2,`+want {
			t.Errorf("the host got\n%s\nwant the upstream's error under id 2:\n%s", got, want)
		}
		if !strings.Contains(got, `connect?gate=legacy&from=demo`) {
			t.Errorf("the URL's & was escaped: %s", got)
		}
		h.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo__gated","arguments":{"gate":"legacy"}}}`)
		if res := h.Result(jsonrpc.NewIntID(3), harness.TranscriptWait); !strings.Contains(string(res), `"structuredContent":{"gate":"legacy","refused":1}`) {
			t.Errorf("retry: %s", res)
		}
	})
}

// TestTranscriptURLRequiredModernHost: a legacy upstream's -32042 to a
// 2026-07-28 host that declared URL-mode elicitation, its retry, and the
// result; golden in testdata/transcripts/url-required-modern-host.txtar.
func TestTranscriptURLRequiredModernHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, harness.LegacyDemo))
		args := `{"gate":"oauth","completeAfter":0.3,"notify":true}`
		m := callGated(h, "c1", args, urlCaps, "")
		keys, state := harness.InputRequiredOf(t, m)
		if len(keys) != 1 || keys[0] != "mcpx-1" {
			t.Fatalf("input request keys %v", keys)
		}
		if !strings.Contains(string(m.Result), `"mcpx-1":{"method":"elicitation/create","params":{"mode":"url","url":"https://example.test/connect?gate=oauth&from=demo","message":`) ||
			strings.Contains(string(m.Result), "elicitationId") {
			t.Errorf("input_required %s: want the upstream's URL elicitation, without elicitationId", m.Result)
		}
		// The user completes the interaction; the upstream says so, to
		// nobody: a 2026-07-28 host has no such notification.
		waitWire(t, e, "demo", "notifications/elicitation/complete")
		m = callGated(h, "c2", args, urlCaps, `,"inputResponses":{"mcpx-1":{"action":"accept"}},"requestState":"`+state+`"`)
		if m.Error != nil || !strings.Contains(string(m.Result), `"structuredContent":{"gate":"oauth","refused":1}`) ||
			!strings.Contains(string(m.Result), `"resultType":"complete"`) {
			t.Fatalf("retry: %s", m.Encode())
		}
		if n := len(wireWith(e, "demo", `"method":"tools/call"`)); n != 2 {
			t.Errorf("the upstream got %d tools/call, want 2 (the refused one, the retry)", n)
		}
		for _, l := range h.ReceivedLines() {
			if strings.Contains(l, "elicitation/complete") || strings.Contains(l, "-32042") {
				t.Errorf("the 2026-07-28 host got %s", l)
			}
		}
		norm := func(lines []string) []string {
			for i, l := range lines {
				lines[i] = sealedState.ReplaceAllString(normalizeLine(l), `"requestState":"SEALED"`)
			}
			return lines
		}
		tr := &mcpxtest.Transcript{Header: `A 2026-07-28 host that declared URL-mode elicitation calls the demo's gated
tool on a legacy upstream (demo -era legacy), which refuses the call with
-32042 (URLElicitationRequiredError) until the user completes its URL
elicitation.

2026-07-28 has no -32042: mcpx answers the host input_required, the URL
elicitation under a key of mcpx's (mcpx-1) without its elicitationId
(removed in 2026-07-28), and a requestState mcpx sealed (SEALED here). The
upstream's notifications/elicitation/complete goes nowhere (2026-07-28 has
none). The host's retry (new id, its accept, the state) makes mcpx call the
tool again, a new upstream request without inputResponses or requestState;
its result reaches the host with resultType complete.`, Streams: []mcpxtest.Stream{
			{Name: streamHostToMcpx, Lines: norm(h.Sent())},
			{Name: streamMcpxToHost, Lines: norm(h.ReceivedLines())},
			{Name: streamUpstream, Lines: norm(e.WireLog("demo"))},
		}}
		mcpxtest.CheckGolden(t, goldenPath("url-required-modern-host"), tr.Format(), *updateGoldens)
	})
}

// TestURLRequiredModernHostRefusals: what a 2026-07-28 host gets instead
// of the tool's result: -32021 naming URL-mode elicitation when its request
// did not declare it (the upstream is called once, mcpx sends no
// inputRequests); -32602 for a tampered state, a state for other
// arguments, or an expired one; a tool error, and no new upstream call,
// when the user declined; input_required again when it retried before the
// user was done.
func TestURLRequiredModernHostRefusals(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(map[string]any{"inputTimeout": "1s"}, harness.LegacyDemo))
		calls := func() int { return len(wireWith(e, "demo", `"method":"tools/call"`)) }

		// Form only: -32021 with the capability it lacks.
		m := callGated(h, "f1", `{"gate":"form"}`, `{"elicitation":{}}`, "")
		if m.Error == nil || m.Error.Code != -32021 || string(m.Error.Data) != `{"requiredCapabilities":{"elicitation":{"url":{}}}}` {
			t.Errorf("a form-only host: %s, want -32021", m.Encode())
		}
		m = callGated(h, "f2", `{"gate":"none"}`, `{}`, "")
		if m.Error == nil || m.Error.Code != -32021 {
			t.Errorf("a host without elicitation: %s, want -32021", m.Encode())
		}

		// A tampered state, a state for other arguments.
		args := `{"gate":"slow","completeAfter":60}`
		_, state := harness.InputRequiredOf(t, callGated(h, "s1", args, urlCaps, ""))
		b := []byte(state)
		i := len(statePrefixForTest) + 12
		b[i] ^= 1
		if b[i] == '"' || b[i] == '\\' {
			b[i] ^= 3
		}
		accept := `,"inputResponses":{"mcpx-1":{"action":"accept"}},"requestState":"`
		before := calls()
		m = callGated(h, "s2", args, urlCaps, accept+string(b)+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "altered") {
			t.Errorf("a tampered state: %s, want -32602", m.Encode())
		}
		m = callGated(h, "s3", `{"gate":"other","completeAfter":60}`, urlCaps, accept+state+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "different request") {
			t.Errorf("a state for other arguments: %s, want -32602", m.Encode())
		}
		if calls() != before {
			t.Errorf("a refused retry reached the upstream")
		}

		// Retried before the user was done: asked again, a new state.
		m = callGated(h, "s4", args, urlCaps, accept+state+`"`)
		_, again := harness.InputRequiredOf(t, m)
		if again == state || calls() != before+1 {
			t.Errorf("an early retry: %s after %d upstream calls, want a new input_required after one", m.Encode(), calls()-before)
		}

		// Declined: a tool error, the upstream not called.
		m = callGated(h, "s5", args, urlCaps, `,"inputResponses":{"mcpx-1":{"action":"decline"}},"requestState":"`+again+`"`)
		if m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) || !strings.Contains(string(m.Result), `the user answered \"decline\"`) ||
			calls() != before+1 {
			t.Errorf("a declined URL elicitation: %s, want a tool error and no upstream call", m.Encode())
		}

		// Expired: the state lives inputTimeout (1s); nothing shows its
		// end but a retry.
		time.Sleep(1100 * time.Millisecond)
		m = callGated(h, "s6", args, urlCaps, accept+again+`"`)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "expired") {
			t.Errorf("an expired state: %s, want -32602", m.Encode())
		}
	})
}

// TestModernUpstreamURLToLegacyHost: a 2026-07-28 upstream's URL-mode
// input request reaches a legacy host that declared URL mode as
// elicitation/create within its call, with an elicitationId mcpx made up
// (2025-11-25 requires one; 2026-07-28 has none); mcpx retries upstream
// with the host's answer under the upstream's key and its requestState
// byte for byte. A legacy host that declared form only is never asked: it
// gets a tool error naming URL mode.
func TestModernUpstreamURLToLegacyHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		harness.AskHost(h, urlCaps)
		h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__gated","arguments":{"gate":"m"}}}`)
		q := harness.Question(h, "elicitation/create")
		var p struct {
			Mode, URL, Message, ElicitationID string
		}
		if json.Unmarshal(q.Params, &p) != nil || p.Mode != "url" || p.URL != "https://example.test/connect?gate=m&from=demo" ||
			!strings.HasPrefix(p.ElicitationID, "mcpx-elicitation-") || !strings.Contains(string(q.Params), "gate=m&from") {
			t.Fatalf("the host's question %s: want URL mode, the upstream's URL as it was, an elicitationId of mcpx's", q.Params)
		}
		h.SendRaw(`{"jsonrpc":"2.0","id":` + q.ID.String() + `,"result":{"action":"accept"}}`)
		res := h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		if !strings.Contains(string(res), `"structuredContent":{"gate":"m","refused":1}`) || strings.Contains(string(res), "resultType") {
			t.Errorf("result %s", res)
		}
		if retry := wireWith(e, "demo", `"inputResponses":{"gate":{"action":"accept"}},"requestState":"gate:m"`); len(retry) != 1 {
			t.Errorf("the upstream's retry: %q", retry)
		}

		formOnly := e.StartHost(mode, cfg)
		harness.AskHost(formOnly, `{"elicitation":{"form":{}}}`)
		formOnly.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__gated","arguments":{"gate":"f"}}}`)
		res = formOnly.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		if !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), `needs elicitation/create in url mode, which this host did not declare`) {
			t.Errorf("a form-only host: %s, want a tool error naming URL mode", res)
		}
		for _, r := range formOnly.Received() {
			if r.Msg.IsRequest() {
				t.Errorf("a form-only host was asked %s", r.Msg.Encode())
			}
		}
	})
}

// TestHeldURLElicitationModernHost: a legacy upstream's URL-mode
// elicitation/create during a call (not -32042) reaches a 2026-07-28 host
// that declared URL mode as input_required without its elicitationId; after
// the host's retry, the upstream's notifications/elicitation/complete is
// dropped (2026-07-28 has none) and the host gets the result.
func TestHeldURLElicitationModernHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		h := e.StartHost(mode, e.WriteConfig(nil, harness.LegacyDemo))
		args := `{"asks":[` + harness.AskURL + `],"complete":true}`
		h.SendRaw(`{"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"demo__ask","arguments":` + args + `,` + modernMetaCaps(urlCaps) + `}}`)
		m := h.Response(jsonrpc.NewStringID("h1"), harness.TranscriptWait)
		_, state := harness.InputRequiredOf(t, m)
		if !strings.Contains(string(m.Result), `"mcpx-1":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.test/login"}}`) {
			t.Errorf("input_required %s: want the URL elicitation without elicitationId", m.Result)
		}
		h.SendRaw(`{"jsonrpc":"2.0","id":"h2","method":"tools/call","params":{"name":"demo__ask","arguments":` + args + `,` + modernMetaCaps(urlCaps) +
			`,"inputResponses":{"mcpx-1":{"action":"accept"}},"requestState":"` + state + `"}}`)
		res := h.Result(jsonrpc.NewStringID("h2"), harness.TranscriptWait)
		if !strings.Contains(string(res), `"answers":[{"result":{"action":"accept"}}]`) {
			t.Errorf("result %s", res)
		}
		if n := wireWith(e, "demo", `"notifications/elicitation/complete","params":{"elicitationId":"el-7"}`); len(n) != 1 {
			t.Errorf("the upstream's completion: %q", n)
		}
		for _, l := range h.ReceivedLines() {
			if strings.Contains(l, "elicitation/complete") || strings.Contains(l, "elicitationId") {
				t.Errorf("the 2026-07-28 host got %s", l)
			}
		}
	})
}

// TestURLRequiredModernHTTPHost: over HTTP, the -32021 a 2026-07-28 host
// without URL-mode elicitation gets comes with status 400, as that
// revision requires; a host that declared it gets input_required (200).
func TestURLRequiredModernHTTPHost(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		m := harness.StartHTTP(t, e, mode, e.WriteConfig(nil, harness.LegacyDemo), false)
		h := harness.NewRawHost(t, m)
		caps := func(c any) map[string]any {
			return harness.ModernMeta(map[string]any{"io.modelcontextprotocol/clientCapabilities": c})
		}
		hdr := harness.ModernHeaders("tools/call", "demo__gated")
		r := h.Do(harness.CallBody(1, "demo__gated", map[string]any{"gate": "http"}, caps(map[string]any{"elicitation": map[string]any{}})), hdr)
		if r.Status != http.StatusBadRequest || len(r.Msgs) != 1 || r.Msgs[0].Error == nil || r.Msgs[0].Error.Code != -32021 {
			t.Errorf("a form-only host: %d %s, want 400 and -32021", r.Status, r.Body)
		}
		url := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
		r = h.Do(harness.CallBody(2, "demo__gated", map[string]any{"gate": "http-url"}, caps(url)), hdr)
		if r.Status != http.StatusOK || len(r.Msgs) != 1 || !strings.Contains(string(r.Msgs[0].Result), `"resultType":"input_required"`) {
			t.Errorf("a URL-mode host: %d %s, want 200 and input_required", r.Status, r.Body)
		}
	})
}
