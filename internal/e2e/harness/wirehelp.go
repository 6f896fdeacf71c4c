package harness

import (
	"encoding/json"
	"fmt"
	"io"
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

// WaitLong bounds every wait on something that must happen; the things
// waited for take milliseconds to a few seconds.
const WaitLong = 30 * time.Second

// Settle is how long a test waits for something that must not happen
// (a response to a cancelled request, late progress) once the upstream has
// seen the cancellation.
const Settle = 300 * time.Millisecond

// MarkerKey is a _meta key mcpx does not own, so it goes upstream as it is:
// it ties a host request to the request the demo recorded.
const MarkerKey = "test/call"

// ProgressNote is the params of one notifications/progress, with the token
// and message as raw bytes so that their exact JSON is checked.
type ProgressNote struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total"`
	Message  json.RawMessage `json:"message"`
}

// AsProgress returns r's progress params, if r is a progress notification.
func AsProgress(t testing.TB, r mcpxtest.Received) (ProgressNote, bool) {
	t.Helper()
	if r.Msg.Method != "notifications/progress" {
		return ProgressNote{}, false
	}
	var p ProgressNote
	if err := json.Unmarshal(r.Msg.Params, &p); err != nil {
		t.Fatalf("progress params %s: %v", r.Msg.Params, err)
	}
	return p, true
}

// ProgressFor returns the progress the host received under token (exact
// JSON bytes), in order.
func ProgressFor(t testing.TB, h *mcpxtest.Host, token string) []mcpxtest.Received {
	t.Helper()
	var out []mcpxtest.Received
	for _, r := range h.Received() {
		if p, ok := AsProgress(t, r); ok && string(p.Token) == token {
			out = append(out, r)
		}
	}
	return out
}

// SendCall sends a tools/call with a raw id (exact JSON), the tool's
// arguments and _meta (nil: none).
func SendCall(h *mcpxtest.Host, rawID, tool string, args any, meta map[string]any) jsonrpc.ID {
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

// Cancel sends the host's notifications/cancelled for rawID.
func Cancel(h *mcpxtest.Host, rawID, reason string) {
	h.Notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(rawID), "reason": reason})
}

// McpxError is the JSON-RPC error mcpx answers a failed call with.
type McpxError struct {
	Code    int64
	Message string
	Kind    string // data.mcpx.kind
}

// ResponseError waits for the response to id and returns its error; the
// test fails if it is a result.
func ResponseError(t testing.TB, h *mcpxtest.Host, id jsonrpc.ID) (McpxError, mcpxtest.Received) {
	t.Helper()
	r := h.WaitFor(WaitLong, "response to id "+id.String(), func(r mcpxtest.Received) bool {
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
	return McpxError{Code: r.Msg.Error.Code, Message: r.Msg.Error.Message, Kind: data.Mcpx.Kind}, r
}

// ResponseIndex returns the index in h.Received() of the response to id, or -1.
func ResponseIndex(recv []mcpxtest.Received, id jsonrpc.ID) int {
	return slices.IndexFunc(recv, func(r mcpxtest.Received) bool { return r.Msg.IsResponse() && r.Msg.ID == id })
}

// StartPiped starts cmd with a pipe to its stdin and one from its stdout.
func StartPiped(t testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
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

// ResultText returns the first text content of a tool result.
func ResultText(t testing.TB, res json.RawMessage) string {
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

// EventAt returns when the demo recorded ev.
func EventAt(t testing.TB, ev demo.Event) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ev.At)
	if err != nil {
		t.Fatalf("record time %q: %v", ev.At, err)
	}
	return at
}

// HasMarker reports whether ev is the demo's record of the request that
// carried _meta[markerKey] = marker.
func HasMarker(ev demo.Event, marker string) bool {
	if ev.Event != demo.EventRequest || len(ev.Meta) == 0 {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(ev.Meta, &m) != nil {
		return false
	}
	return string(m[MarkerKey]) == string(jsonrpc.MustMarshal(marker))
}

// UpstreamRequest waits for the demo's record of the request marked marker.
func UpstreamRequest(e *mcpxtest.Env, server, marker string) demo.Event {
	e.T.Helper()
	return e.WaitRecord(server, WaitLong, func(ev demo.Event) bool { return HasMarker(ev, marker) })
}

// UpstreamCancel waits for the demo's record of a cancellation of the
// upstream request id.
func UpstreamCancel(e *mcpxtest.Env, server string, id json.RawMessage) demo.Event {
	e.T.Helper()
	return e.WaitRecord(server, WaitLong, func(ev demo.Event) bool {
		return ev.Event == demo.EventCancelled && string(ev.RequestID) == string(id)
	})
}

// Cancellations returns every cancellation the demo recorded.
func Cancellations(e *mcpxtest.Env, server string) []demo.Event {
	e.T.Helper()
	var out []demo.Event
	for _, ev := range e.Records(server) {
		if ev.Event == demo.EventCancelled {
			out = append(out, ev)
		}
	}
	return out
}

// CheckCancel checks a recorded cancellation: it matched a running request
// (known), and its reason is want.
func CheckCancel(t testing.TB, ev demo.Event, want string) {
	t.Helper()
	if ev.Known == nil || !*ev.Known {
		t.Errorf("upstream cancellation of %s did not match a running request: %+v", ev.RequestID, ev)
	}
	if ev.Reason != want {
		t.Errorf("upstream cancellation reason = %q, want %q", ev.Reason, want)
	}
}

// Describe prints recorded events for a failure message.
func Describe(evs []demo.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		j, _ := json.Marshal(ev)
		fmt.Fprintf(&b, "  %s\n", j)
	}
	return b.String()
}

// Quantile returns the q-quantile (nearest rank) of sorted durations.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
