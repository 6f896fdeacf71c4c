package daemon

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it keeps the spans posted
// to /v1/traces.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if req.URL.Path != "/v1/traces" || err != nil {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			t.Errorf("the OTLP receiver got a body it cannot read (%s): %v", req.Header.Get("Content-Type"), err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// span waits for the span whose id is spanID (hex).
func (r *otlpReceiver) span(t *testing.T, spanID string) *tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(harness.WaitLong)
	for {
		r.mu.Lock()
		for _, s := range r.spans {
			if hex.EncodeToString(s.GetSpanId()) == spanID {
				r.mu.Unlock()
				return s
			}
		}
		n := len(r.spans)
		r.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no span %s reached the receiver within %s (%d others did)", spanID, harness.WaitLong, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// upstreamTraceparent returns the traceparent in the _meta of the
// upstream request marked marker.
func upstreamTraceparent(t *testing.T, e *mcpxtest.Env, marker string) (traceID, spanID string) {
	t.Helper()
	ev := harness.UpstreamRequest(e, "demo", marker)
	var meta struct {
		Traceparent string `json:"traceparent"`
	}
	_ = json.Unmarshal(ev.Meta, &meta)
	f := strings.Split(meta.Traceparent, "-")
	if len(f) != 4 {
		t.Fatalf("the upstream got no traceparent: _meta %s", ev.Meta)
	}
	return f[1], f[2]
}

// TestTraces: with mcpx.traces set, each tool call is a span exported
// over OTLP/HTTP; the upstream gets the span's trace context in _meta
// (traceparent); a host's traceparent makes the span its child, in its
// trace; without one, the span starts a trace.
func TestTraces(t *testing.T) {
	const hostTrace, hostSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		rcv := newOTLPReceiver(t)
		cfg := e.WriteConfig(map[string]any{"traces": map[string]any{"endpoint": rcv.srv.URL, "serviceName": "mcpx-test"}}, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		id := harness.SendCall(h, "1", "demo__echo", map[string]any{"x": 1},
			map[string]any{"traceparent": "00-" + hostTrace + "-" + hostSpan + "-01", harness.MarkerKey: "traced"})
		h.Result(id, harness.WaitLong)
		id = harness.SendCall(h, "2", "demo__echo", map[string]any{"x": 2}, map[string]any{harness.MarkerKey: "untraced"})
		h.Result(id, harness.WaitLong)

		gotTrace, gotSpan := upstreamTraceparent(t, e, "traced")
		if gotTrace != hostTrace || gotSpan == hostSpan {
			t.Errorf("upstream traceparent trace %s span %s; want the host's trace %s and a span of mcpx's", gotTrace, gotSpan, hostTrace)
		}
		rootTrace, rootSpan := upstreamTraceparent(t, e, "untraced")
		if rootTrace == hostTrace {
			t.Errorf("a call without a host trace went upstream in the host's trace")
		}
		// An in-process mcpx exports its last spans as it stops; the
		// daemon exports in batches within seconds.
		h.Close()

		s := rcv.span(t, gotSpan)
		if hex.EncodeToString(s.GetTraceId()) != hostTrace || hex.EncodeToString(s.GetParentSpanId()) != hostSpan || s.GetName() != "tools/call demo.echo" {
			t.Errorf("span %q trace %x parent %x; want tools/call demo.echo in the host's trace under its span", s.GetName(), s.GetTraceId(), s.GetParentSpanId())
		}
		root := rcv.span(t, rootSpan)
		if len(root.GetParentSpanId()) != 0 || hex.EncodeToString(root.GetTraceId()) != rootTrace {
			t.Errorf("the untraced call's span has parent %x, trace %x; want a root of trace %s", root.GetParentSpanId(), root.GetTraceId(), rootTrace)
		}
		t.Logf("%s: host trace %s -> mcpx span %s -> upstream traceparent; root span %s", mode, hostTrace, gotSpan, rootSpan)
	})
}
