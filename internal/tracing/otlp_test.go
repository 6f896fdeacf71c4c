package tracing

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"mcpx/internal/relay"
)

// receiver is an OTLP/HTTP receiver decoding with the reference protobuf
// code; status, when set, answers each post before the spans are kept.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []*coltrace.ExportTraceServiceRequest
	headers []http.Header
	status  []int // answers to the first posts, then 200
}

func newReceiver(t *testing.T, status ...int) *receiver {
	return startReceiver(t, httptest.NewServer, status...)
}

func startReceiver(t *testing.T, start func(http.Handler) *httptest.Server, status ...int) *receiver {
	r := &receiver{status: status}
	r.srv = start(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body []byte
		if req.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(req.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			body, _ = io.ReadAll(z)
		} else {
			body, _ = io.ReadAll(req.Body)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.headers = append(r.headers, req.Header.Clone())
		if len(r.status) > 0 {
			code := r.status[0]
			r.status = r.status[1:]
			w.Header().Set("Retry-After", "0")
			http.Error(w, "not now", code)
			return
		}
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			t.Errorf("the receiver cannot read the body: %v", err)
		}
		r.reqs = append(r.reqs, &msg)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func attrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

func TestExporterSpeaksOTLP(t *testing.T) {
	rcv := newReceiver(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20a,x-team=a", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=b"}
	exp, err := newExporter(rcv.srv.URL+"/v1/traces", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tr := NewWithExporter(exp, "svc", "1.2")
	child, end := tr.StartCall(relay.CallInfo{ID: 7, Server: "demo", Tool: "echo", Host: "h"}, relay.TraceContext{Traceparent: hostParent, Tracestate: "vendor=1"})
	end(relay.OutcomeFailed, errors.New("upstream exited"))
	_, span := tr.tracer.Start(context.Background(), "typed", trace.WithAttributes(
		attribute.Bool("b", true), attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"x", "y"}),
		attribute.Int64Slice("is", []int64{-1, 2}), attribute.String("empty", "")))
	span.SetStatus(codes.Ok, "")
	span.AddEvent("ev", trace.WithAttributes(attribute.Int("n", 3)))
	span.End()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.reqs) != 1 || len(rcv.reqs[0].GetResourceSpans()) != 1 {
		t.Fatalf("requests %v, want one with one resource", rcv.reqs)
	}
	if h := rcv.headers[0]; h.Get("Content-Type") != "application/x-protobuf" || h.Get("Authorization") != "Bearer a" || h.Get("X-Team") != "b" {
		t.Errorf("headers %v", h)
	}
	rs := rcv.reqs[0].GetResourceSpans()[0]
	if res := attrs(rs.GetResource().GetAttributes()); res["service.name"].GetStringValue() != "svc" || res["service.version"].GetStringValue() != "1.2" {
		t.Errorf("resource %v", res)
	}
	ss := rs.GetScopeSpans()
	if len(ss) != 1 || ss[0].GetScope().GetName() != "mcpx" || len(ss[0].GetSpans()) != 2 {
		t.Fatalf("scope spans %v, want the two spans under scope mcpx", ss)
	}
	call, typed := ss[0].GetSpans()[0], ss[0].GetSpans()[1]
	traceID, spanID := parts(t, child.Traceparent)
	if hex.EncodeToString(call.GetTraceId()) != traceID || hex.EncodeToString(call.GetSpanId()) != spanID ||
		hex.EncodeToString(call.GetParentSpanId()) != "b7ad6b7169203331" || call.GetTraceState() != "vendor=1" {
		t.Errorf("ids: trace %x span %x parent %x state %q; want %s %s, the host's span, vendor=1",
			call.GetTraceId(), call.GetSpanId(), call.GetParentSpanId(), call.GetTraceState(), traceID, spanID)
	}
	if call.GetName() != "tools/call demo.echo" || call.GetKind() != tracepb.Span_SPAN_KIND_CLIENT ||
		call.GetFlags() != 0x301 || call.GetEndTimeUnixNano() < call.GetStartTimeUnixNano() ||
		time.Since(time.Unix(0, int64(call.GetStartTimeUnixNano()))) > time.Minute {
		t.Errorf("span %q kind %v flags %#x start %d end %d", call.GetName(), call.GetKind(), call.GetFlags(), call.GetStartTimeUnixNano(), call.GetEndTimeUnixNano())
	}
	if a := attrs(call.GetAttributes()); a["mcpx.call_id"].GetIntValue() != 7 || a["mcpx.outcome"].GetStringValue() != "failed" || a["gen_ai.tool.name"].GetStringValue() != "echo" {
		t.Errorf("attributes %v", a)
	}
	if st := call.GetStatus(); st.GetCode() != tracepb.Status_STATUS_CODE_ERROR || st.GetMessage() != "upstream exited" {
		t.Errorf("status %v", st)
	}
	a := attrs(typed.GetAttributes())
	if !a["b"].GetBoolValue() || a["f"].GetDoubleValue() != 1.5 || len(a["ss"].GetArrayValue().GetValues()) != 2 ||
		a["ss"].GetArrayValue().GetValues()[1].GetStringValue() != "y" || a["is"].GetArrayValue().GetValues()[0].GetIntValue() != -1 {
		t.Errorf("typed attributes %v", a)
	}
	if v, ok := a["empty"]; !ok || v.GetValue() == nil {
		t.Errorf("the empty string attribute is %v, want a string value", v)
	}
	if typed.GetParentSpanId() != nil || typed.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_OK ||
		len(typed.GetEvents()) != 1 || attrs(typed.GetEvents()[0].GetAttributes())["n"].GetIntValue() != 3 {
		t.Errorf("root span: parent %x status %v events %v", typed.GetParentSpanId(), typed.GetStatus(), typed.GetEvents())
	}
}

func TestExporterRetries(t *testing.T) {
	rcv := newReceiver(t, http.StatusServiceUnavailable, http.StatusTooManyRequests)
	exp, _ := newExporter(rcv.srv.URL+"/v1/traces", func(string) string { return "" })
	exp.backoff = time.Millisecond
	tr := NewWithExporter(exp, "", "test")
	_, end := tr.StartCall(relay.CallInfo{Server: "s", Tool: "t"}, relay.TraceContext{})
	end(relay.OutcomeOK, nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.headers) != 3 || len(rcv.reqs) != 1 {
		t.Errorf("%d posts, %d accepted; want 3 and 1 (two refusals worth retrying)", len(rcv.headers), len(rcv.reqs))
	}
}

func TestExporterGivesUp(t *testing.T) {
	rcv := newReceiver(t, http.StatusBadRequest)
	exp, _ := newExporter(rcv.srv.URL+"/v1/traces", func(string) string { return "" })
	tr := NewWithExporter(exp, "", "test")
	_, end := tr.StartCall(relay.CallInfo{Server: "s", Tool: "t"}, relay.TraceContext{})
	end(relay.OutcomeOK, nil)
	err := tr.provider.ForceFlush(context.Background())
	_ = tr.Shutdown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("flush error %v, want the receiver's 400", err)
	}
	if _, err := newExporter("http://x/v1/traces", func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}[k] }); err == nil {
		t.Error("a header without a value was accepted")
	}
}

// TestExporterEnvironment: a receiver over TLS whose CA only the
// environment names, with gzip bodies; and bad values refused.
func TestExporterEnvironment(t *testing.T) {
	rcv := startReceiver(t, httptest.NewTLSServer)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT": "5000"}
	exp, err := newExporter(rcv.srv.URL+"/v1/traces", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tr := NewWithExporter(exp, "", "test")
	_, end := tr.StartCall(relay.CallInfo{Server: "s", Tool: "t"}, relay.TraceContext{})
	end(relay.OutcomeOK, nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	if len(rcv.reqs) != 1 || rcv.headers[0].Get("Content-Encoding") != "gzip" {
		t.Errorf("%d requests read, headers %v; want one, gzipped", len(rcv.reqs), rcv.headers)
	}
	rcv.mu.Unlock()

	for _, bad := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
		{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(t.TempDir(), "missing.pem")},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE": os.Args[0]},
	} {
		if _, err := newExporter("https://x/v1/traces", func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
