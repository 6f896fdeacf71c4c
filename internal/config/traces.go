package config

import (
	"net/url"
)

// Traces says where the daemon sends OpenTelemetry traces (the file's
// mcpx.traces block); its zero value sends none.
type Traces struct {
	// Endpoint is the base URL of an OTLP/HTTP receiver (spans go to
	// Endpoint + "/v1/traces"), or "" for no traces.
	Endpoint string
	// ServiceName names mcpx in the traces; "" means "mcpx".
	ServiceName string
}

func (p *parser) traces(n *node, at path, t *Traces) error {
	f, err := p.object(n, at, []string{"endpoint", "serviceName"})
	if err != nil {
		return err
	}
	if v, ok := f["endpoint"]; ok {
		s, err := p.str(v, at.key("endpoint"))
		if err != nil {
			return err
		}
		u, perr := url.Parse(s)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return p.errorf(v.off, at.key("endpoint"), "must be the http:// or https:// base URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318")
		}
		t.Endpoint = s
	}
	if v, ok := f["serviceName"]; ok {
		s, err := p.str(v, at.key("serviceName"))
		if err != nil {
			return err
		}
		if s == "" {
			return p.errorf(v.off, at.key("serviceName"), "must not be empty")
		}
		t.ServiceName = s
	}
	return nil
}
