package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"mcpx/internal/relay"
)

const hostParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// parts splits a traceparent into its trace id and span id.
func parts(t *testing.T, tp string) (traceID, spanID string) {
	t.Helper()
	f := strings.Split(tp, "-")
	if len(f) != 4 || f[0] != "00" || len(f[1]) != 32 || len(f[2]) != 16 {
		t.Fatalf("traceparent %q is not a W3C traceparent", tp)
	}
	return f[1], f[2]
}

func TestSpanContinuesHostTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := NewWithExporter(exp, "", "test")
	info := relay.CallInfo{ID: 7, Server: "demo", Tool: "echo", Host: "host-1"}

	child, end := tr.StartCall(info, relay.TraceContext{Traceparent: hostParent, Tracestate: "vendor=1"})
	traceID, spanID := parts(t, child.Traceparent)
	if traceID != "0af7651916cd43dd8448eb211c80319c" || spanID == "b7ad6b7169203331" {
		t.Errorf("upstream traceparent %q: want the host's trace and a span of mcpx's", child.Traceparent)
	}
	if child.Tracestate != "vendor=1" {
		t.Errorf("tracestate %q, want the host's", child.Tracestate)
	}
	end(relay.OutcomeOK, nil)

	root, endRoot := tr.StartCall(info, relay.TraceContext{})
	rootTrace, _ := parts(t, root.Traceparent)
	endRoot(relay.OutcomeCancelled, &relay.Cause{Kind: relay.HostCancelled})

	bad, endBad := tr.StartCall(info, relay.TraceContext{Traceparent: "00-zz-yy-01"})
	badTrace, _ := parts(t, bad.Traceparent)
	endBad(relay.OutcomeFailed, errors.New("upstream exited"))
	if rootTrace == traceID || badTrace == traceID || badTrace == rootTrace {
		t.Errorf("calls without a valid host trace share a trace: %s %s %s", traceID, rootTrace, badTrace)
	}

	// The in-memory exporter forgets its spans at shutdown: flush first.
	if err := tr.provider.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	defer tr.Shutdown(context.Background())
	if len(spans) != 3 {
		t.Fatalf("%d spans exported, want 3", len(spans))
	}
	s := spans[0]
	if s.Name != "tools/call demo.echo" || s.Parent.SpanID().String() != "b7ad6b7169203331" || s.SpanContext.SpanID().String() != spanID {
		t.Errorf("span %q parent %s id %s; want tools/call demo.echo, the host's span as parent, the id sent upstream",
			s.Name, s.Parent.SpanID(), s.SpanContext.SpanID())
	}
	attrs := map[string]string{}
	for _, a := range s.Attributes {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["mcpx.outcome"] != "ok" || attrs["mcpx.call_id"] != "7" || attrs["gen_ai.tool.name"] != "echo" {
		t.Errorf("attributes %v", attrs)
	}
	if spans[1].Parent.IsValid() || spans[1].Status.Code != codes.Error {
		t.Errorf("the cancelled call's span: parent %v status %v; want a root span with an error status", spans[1].Parent, spans[1].Status)
	}
	if spans[2].Status.Description != "upstream exited" {
		t.Errorf("the failed call's status %q", spans[2].Status.Description)
	}
}
