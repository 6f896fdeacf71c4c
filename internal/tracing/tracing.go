// Package tracing is the daemon's OpenTelemetry traces: a span per tool
// call, exported over OTLP/HTTP, whose W3C trace context goes upstream in
// the call's _meta and continues the host's when the host sent one.
//
// It implements relay.Tracer. A Tracer is safe for concurrent use; its
// owner calls Shutdown once, which flushes the spans not yet exported.
package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// Tracer makes the spans of tool calls.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TraceContext
}

// New returns a tracer exporting to cfg's OTLP/HTTP endpoint. Nothing is
// dialled until the first spans are exported.
func New(_ context.Context, cfg config.Traces, version string) (*Tracer, error) {
	exp, err := newExporter(strings.TrimSuffix(cfg.Endpoint, "/")+"/v1/traces", os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("setting up the OTLP exporter for %s: %w", cfg.Endpoint, err)
	}
	return NewWithExporter(exp, cfg.ServiceName, version), nil
}

// NewWithExporter returns a tracer handing its spans to exp in batches
// (tests give it an in-memory exporter); service "" is "mcpx".
func NewWithExporter(exp sdktrace.SpanExporter, service, version string) *Tracer {
	if service == "" {
		service = "mcpx"
	}
	res := resource.NewSchemaless(attribute.String("service.name", service), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)), // spans show within a second
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	)
	return &Tracer{provider: tp, tracer: tp.Tracer("mcpx")}
}

// StartCall implements relay.Tracer: a client span named for the tool,
// child of the host's trace context when it is valid.
func (t *Tracer) StartCall(c relay.CallInfo, parent relay.TraceContext) (relay.TraceContext, func(relay.Outcome, error)) {
	ctx := context.Background()
	if parent.Traceparent != "" {
		ctx = t.prop.Extract(ctx, propagation.MapCarrier{"traceparent": parent.Traceparent, "tracestate": parent.Tracestate})
	}
	ctx, span := t.tracer.Start(ctx, "tools/call "+c.Server+"."+c.Tool,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("mcp.method.name", mcp.MethodToolsCall),
			attribute.String("gen_ai.tool.name", c.Tool),
			attribute.String("mcpx.server", c.Server),
			attribute.Int64("mcpx.call_id", int64(c.ID)),
			attribute.String("mcpx.host", c.Host),
		))
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	end := func(outcome relay.Outcome, err error) {
		span.SetAttributes(attribute.String("mcpx.outcome", string(outcome)))
		if cause, ok := relay.CauseOf(err); ok {
			span.SetAttributes(attribute.String("mcpx.cause", cause.Kind.String()))
		}
		switch {
		case err != nil:
			span.SetStatus(codes.Error, err.Error())
		case outcome == relay.OutcomeToolError:
			span.SetStatus(codes.Error, "the tool reported an error")
		}
		span.End()
	}
	return relay.TraceContext{Traceparent: carrier["traceparent"], Tracestate: carrier["tracestate"]}, end
}

// Shutdown exports the spans not yet exported and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }
