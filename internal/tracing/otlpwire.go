package tracing

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP trace messages are written by hand in the protobuf wire format
// (opentelemetry-proto, trace/v1 and collector/trace/v1): the few fields
// mcpx's spans use, so that no protobuf runtime or gRPC is linked in.

// pb is a protobuf message being written.
type pb []byte

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) varint(field int, v uint64) pb {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(b.tag(field, wireVarint), v)
}

func (b pb) fixed64(field int, v uint64) pb {
	return binary.LittleEndian.AppendUint64(b.tag(field, wireFixed64), v)
}

func (b pb) fixed32(field int, v uint32) pb {
	return binary.LittleEndian.AppendUint32(b.tag(field, wireFixed32), v)
}

func (b pb) bytes(field int, v []byte) pb {
	b = binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func (b pb) str(field int, v string) pb {
	if v == "" {
		return b
	}
	b = binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// msg writes the message fill writes as field.
func (b pb) msg(field int, fill func(pb) pb) pb { return b.bytes(field, fill(nil)) }

// exportRequest is an ExportTraceServiceRequest: one ResourceSpans per
// resource, one ScopeSpans per instrumentation scope, in the spans' order.
func exportRequest(spans []sdktrace.ReadOnlySpan) []byte {
	var b pb
	for i := 0; i < len(spans); {
		res := spans[i].Resource()
		j := i
		for j < len(spans) && spans[j].Resource() == res {
			j++
		}
		group := spans[i:j]
		b = b.msg(1, func(rs pb) pb {
			rs = rs.msg(1, func(r pb) pb { return resourceMsg(r, res) })
			for k := 0; k < len(group); {
				scope := group[k].InstrumentationScope()
				l := k
				for l < len(group) && group[l].InstrumentationScope() == scope {
					l++
				}
				rs = rs.msg(2, func(ss pb) pb { return scopeSpans(ss, scope, group[k:l]) })
				k = l
			}
			return rs.str(3, res.SchemaURL())
		})
		i = j
	}
	return b
}

func resourceMsg(b pb, res *resource.Resource) pb {
	for _, kv := range res.Attributes() {
		b = b.msg(1, func(m pb) pb { return keyValue(m, kv) })
	}
	return b
}

func scopeSpans(b pb, scope instrumentation.Scope, spans []sdktrace.ReadOnlySpan) pb {
	b = b.msg(1, func(m pb) pb { return m.str(1, scope.Name).str(2, scope.Version) })
	for _, s := range spans {
		b = b.msg(2, func(m pb) pb { return span(m, s) })
	}
	return b.str(3, scope.SchemaURL)
}

// Span flags beyond the W3C trace flags: whether the parent is known to
// be remote, and whether it is.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func span(b pb, s sdktrace.ReadOnlySpan) pb {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = b.bytes(1, tid[:]).bytes(2, sid[:]).str(3, sc.TraceState().String())
	if parent.IsValid() {
		pid := parent.SpanID()
		b = b.bytes(4, pid[:])
	}
	b = b.str(5, s.Name()).varint(6, uint64(s.SpanKind()))
	b = b.fixed64(7, uint64(s.StartTime().UnixNano())).fixed64(8, uint64(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = b.msg(9, func(m pb) pb { return keyValue(m, kv) })
	}
	b = b.varint(10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = b.msg(11, func(m pb) pb {
			m = m.fixed64(1, uint64(e.Time.UnixNano())).str(2, e.Name)
			for _, kv := range e.Attributes {
				m = m.msg(3, func(a pb) pb { return keyValue(a, kv) })
			}
			return m.varint(4, uint64(e.DroppedAttributeCount))
		})
	}
	b = b.varint(12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = b.msg(13, func(m pb) pb {
			lt, ls := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			m = m.bytes(1, lt[:]).bytes(2, ls[:]).str(3, l.SpanContext.TraceState().String())
			for _, kv := range l.Attributes {
				m = m.msg(4, func(a pb) pb { return keyValue(a, kv) })
			}
			return m.varint(5, uint64(l.DroppedAttributeCount)).fixed32(6, uint32(l.SpanContext.TraceFlags()))
		})
	}
	b = b.varint(14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		b = b.msg(15, func(m pb) pb { return m.str(2, st.Description).varint(3, statusCode(st.Code)) })
	}
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if parent.IsRemote() {
		flags |= flagIsRemote
	}
	return b.fixed32(16, flags)
}

// statusCode is OTLP's number of an OpenTelemetry status code (OK and
// ERROR are numbered the other way round).
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func keyValue(b pb, kv attribute.KeyValue) pb {
	return b.str(1, string(kv.Key)).msg(2, func(m pb) pb { return anyValue(m, kv.Value) })
}

// anyValue writes an AnyValue; a type OTLP has no field for is written
// as its string form.
func anyValue(b pb, v attribute.Value) pb {
	switch v.Type() {
	case attribute.BOOL:
		if v.AsBool() {
			return binary.AppendUvarint(b.tag(2, wireVarint), 1)
		}
		return binary.AppendUvarint(b.tag(2, wireVarint), 0)
	case attribute.INT64:
		return binary.AppendUvarint(b.tag(3, wireVarint), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return b.fixed64(4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return b.bytes(1, []byte(v.AsString()))
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.BoolValue(s[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.Int64Value(s[i]) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.Float64Value(s[i]) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(b, len(s), func(i int) attribute.Value { return attribute.StringValue(s[i]) })
	case attribute.BYTESLICE:
		return b.bytes(7, v.AsByteSlice())
	}
	return b.bytes(1, []byte(v.String()))
}

// array writes an ArrayValue of n values.
func array(b pb, n int, at func(int) attribute.Value) pb {
	return b.msg(5, func(a pb) pb {
		for i := range n {
			a = a.msg(1, func(m pb) pb { return anyValue(m, at(i)) })
		}
		return a
	})
}
