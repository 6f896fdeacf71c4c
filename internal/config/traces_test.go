package config

import (
	"strings"
	"testing"
)

func TestTraces(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Traces
	}{
		{`{}`, Traces{}},
		{`{"mcpx": {"traces": {}}}`, Traces{}},
		{`{"mcpx": {"traces": {"endpoint": "http://127.0.0.1:4318"}}}`, Traces{Endpoint: "http://127.0.0.1:4318"}},
		{`{"mcpx": {"traces": {"endpoint": "https://otel.example/base", "serviceName": "gw"}}}`, Traces{Endpoint: "https://otel.example/base", ServiceName: "gw"}},
	} {
		c, err := parse(tc.file)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if c.Traces != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.file, c.Traces, tc.want)
		}
	}
	const f = "config " + testFile + ": "
	for _, tc := range []struct{ file, want string }{
		{`{"mcpx": {"traces": "http://x"}}`, f + `mcpx.traces: must be an object`},
		{`{"mcpx": {"traces": {"endpiont": "x"}}}`, f + `mcpx.traces.endpiont: unknown field (did you mean "endpoint"?)`},
		{`{"mcpx": {"traces": {"endpoint": 4318}}}`, f + `mcpx.traces.endpoint: must be a string`},
		{`{"mcpx": {"traces": {"endpoint": "127.0.0.1:4318"}}}`, f + `mcpx.traces.endpoint: must be the http:// or https:// base URL`},
		{`{"mcpx": {"traces": {"endpoint": "grpc://x:4317"}}}`, f + `mcpx.traces.endpoint: must be the http:// or https:// base URL`},
		{`{"mcpx": {"traces": {"endpoint": "http://x?a=b"}}}`, f + `mcpx.traces.endpoint: must be the http:// or https:// base URL`},
		{`{"mcpx": {"traces": {"serviceName": ""}}}`, f + `mcpx.traces.serviceName: must not be empty`},
	} {
		_, err := parse(tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.file, err, tc.want)
		}
	}
}
