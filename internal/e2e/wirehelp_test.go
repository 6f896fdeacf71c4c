package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// Helpers shared by the relay tests (progress, cancel, timeout, initialize,
// eras, stop): what a host received, and what the demo upstream recorded.

// waitLong bounds every wait on something that must happen; the things
// waited for take milliseconds to a few seconds.
const waitLong = 30 * time.Second

// settle is how long a test waits for something that must not happen
// (a response to a cancelled request, late progress) once the upstream has
// seen the cancellation.
const settle = 300 * time.Millisecond

// markerKey is a _meta key mcpx does not own, so it goes upstream as it is:
// it ties a host request to the request the demo recorded.
const markerKey = "test/call"

// progressNote is the params of one notifications/progress, with the token
// and message as raw bytes so that their exact JSON is checked.
type progressNote struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total"`
	Message  json.RawMessage `json:"message"`
}

// asProgress returns r's progress params, if r is a progress notification.
func asProgress(t testing.TB, r mcpxtest.Received) (progressNote, bool) {
	t.Helper()
	if r.Msg.Method != "notifications/progress" {
		return progressNote{}, false
	}
	var p progressNote
	if err := json.Unmarshal(r.Msg.Params, &p); err != nil {
		t.Fatalf("progress params %s: %v", r.Msg.Params, err)
	}
	return p, true
}

// progressFor returns the progress the host received under token (exact
// JSON bytes), in order.
func progressFor(t testing.TB, h *mcpxtest.Host, token string) []mcpxtest.Received {
	t.Helper()
	var out []mcpxtest.Received
	for _, r := range h.Received() {
		if p, ok := asProgress(t, r); ok && string(p.Token) == token {
			out = append(out, r)
		}
	}
	return out
}

// sendCall sends a tools/call with a raw id (exact JSON), the tool's
// arguments and _meta (nil: none).
func sendCall(h *mcpxtest.Host, rawID, tool string, args any, meta map[string]any) jsonrpc.ID {
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	h.Send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(rawID), "method": "tools/call", "params": params})
	id, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":` + rawID + `,"method":"x"}`))
	if err != nil {
		panic(err)
	}
	return id.ID
}

// cancel sends the host's notifications/cancelled for rawID.
func cancel(h *mcpxtest.Host, rawID, reason string) {
	h.Notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(rawID), "reason": reason})
}

// mcpxError is the JSON-RPC error mcpx answers a failed call with.
type mcpxError struct {
	Code    int64
	Message string
	Kind    string // data.mcpx.kind
}

// responseError waits for the response to id and returns its error; the
// test fails if it is a result.
func responseError(t testing.TB, h *mcpxtest.Host, id jsonrpc.ID) (mcpxError, mcpxtest.Received) {
	t.Helper()
	r := h.WaitFor(waitLong, "response to id "+id.String(), func(r mcpxtest.Received) bool {
		return r.Msg.IsResponse() && r.Msg.ID == id
	})
	if r.Msg.Error == nil {
		t.Fatalf("request %s succeeded, want an error: %s", id, r.Raw)
	}
	var data struct {
		Mcpx struct {
			Kind string `json:"kind"`
		} `json:"mcpx"`
	}
	if len(r.Msg.Error.Data) > 0 {
		if err := json.Unmarshal(r.Msg.Error.Data, &data); err != nil {
			t.Fatalf("error data %s: %v", r.Msg.Error.Data, err)
		}
	}
	return mcpxError{Code: r.Msg.Error.Code, Message: r.Msg.Error.Message, Kind: data.Mcpx.Kind}, r
}

// responseIndex returns the index in h.Received() of the response to id, or -1.
func responseIndex(recv []mcpxtest.Received, id jsonrpc.ID) int {
	return slices.IndexFunc(recv, func(r mcpxtest.Received) bool { return r.Msg.IsResponse() && r.Msg.ID == id })
}

// startPiped starts cmd with a pipe to its stdin and one from its stdout.
func startPiped(t testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

// progressBefore returns the progress values h received under token (its
// JSON), in order, failing the test for any that came after the response
// to id.
func progressBefore(t *testing.T, h *mcpxtest.Host, id jsonrpc.ID, token string) []float64 {
	t.Helper()
	recv := h.Received()
	resAt := responseIndex(recv, id)
	var seen []float64
	for i, r := range recv {
		if p, ok := asProgress(t, r); ok && string(p.Token) == token {
			if i > resAt {
				t.Errorf("progress after the result: %s", r.Raw)
			}
			seen = append(seen, p.Progress)
		}
	}
	return seen
}

// resultText returns the first text content of a tool result.
func resultText(t testing.TB, res json.RawMessage) string {
	t.Helper()
	var got struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &got); err != nil || len(got.Content) == 0 {
		t.Fatalf("tool result without text content: %s", res)
	}
	return got.Content[0].Text
}

// eventAt returns when the demo recorded ev.
func eventAt(t testing.TB, ev demo.Event) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ev.At)
	if err != nil {
		t.Fatalf("record time %q: %v", ev.At, err)
	}
	return at
}

// metaOf decodes a recorded request's _meta.
func metaOf(t testing.TB, ev demo.Event) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	if len(ev.Meta) > 0 {
		if err := json.Unmarshal(ev.Meta, &m); err != nil {
			t.Fatalf("recorded _meta %s: %v", ev.Meta, err)
		}
	}
	return m
}

// hasMarker reports whether ev is the demo's record of the request that
// carried _meta[markerKey] = marker.
func hasMarker(ev demo.Event, marker string) bool {
	if ev.Event != demo.EventRequest || len(ev.Meta) == 0 {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(ev.Meta, &m) != nil {
		return false
	}
	return string(m[markerKey]) == string(jsonrpc.MustMarshal(marker))
}

// upstreamRequest waits for the demo's record of the request marked marker.
func upstreamRequest(e *mcpxtest.Env, server, marker string) demo.Event {
	e.T.Helper()
	return e.WaitRecord(server, waitLong, func(ev demo.Event) bool { return hasMarker(ev, marker) })
}

// recordedRequest returns the demo's record of the request marked marker,
// if there is one yet.
func recordedRequest(e *mcpxtest.Env, server, marker string) (demo.Event, bool) {
	e.T.Helper()
	for _, ev := range e.Records(server) {
		if hasMarker(ev, marker) {
			return ev, true
		}
	}
	return demo.Event{}, false
}

// upstreamCancel waits for the demo's record of a cancellation of the
// upstream request id.
func upstreamCancel(e *mcpxtest.Env, server string, id json.RawMessage) demo.Event {
	e.T.Helper()
	return e.WaitRecord(server, waitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventCancelled && string(ev.RequestID) == string(id)
	})
}

// cancellations returns every cancellation the demo recorded.
func cancellations(e *mcpxtest.Env, server string) []demo.Event {
	e.T.Helper()
	var out []demo.Event
	for _, ev := range e.Records(server) {
		if ev.Event == demo.EventCancelled {
			out = append(out, ev)
		}
	}
	return out
}

// checkCancel checks a recorded cancellation: it matched a running request
// (known), and its reason is want.
func checkCancel(t testing.TB, ev demo.Event, want string) {
	t.Helper()
	if ev.Known == nil || !*ev.Known {
		t.Errorf("upstream cancellation of %s did not match a running request: %+v", ev.RequestID, ev)
	}
	if ev.Reason != want {
		t.Errorf("upstream cancellation reason = %q, want %q", ev.Reason, want)
	}
}

// describe prints recorded events for a failure message.
func describe(evs []demo.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		j, _ := json.Marshal(ev)
		fmt.Fprintf(&b, "  %s\n", j)
	}
	return b.String()
}

// wireLines returns the lines demo server wrote ("> ") or read ("< "),
// from its wire log, without the prefix.
func wireLines(t testing.TB, e *mcpxtest.Env, server, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(e.WireLogPath(server))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// quantile returns the q-quantile (nearest rank) of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
