package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporter posts spans to an OTLP/HTTP receiver as binary protobuf. It
// retries what the protocol says may succeed later (429, 502, 503, 504
// and failed connections), waiting as the receiver's Retry-After says or
// backing off, until the batch's context ends.
type exporter struct {
	url     string
	headers http.Header
	client  *http.Client
	gzip    bool
	backoff time.Duration // the first wait between tries
}

// newExporter returns an exporter posting to url. It reads the variables
// OpenTelemetry's own exporters read, the TRACES one winning over the
// general one: OTEL_EXPORTER_OTLP_[TRACES_]HEADERS (key=value pairs,
// comma-separated, values URL-encoded), _TIMEOUT (milliseconds, default
// 10 s), _COMPRESSION (gzip or none), _CERTIFICATE (the receiver's CA,
// PEM), _CLIENT_CERTIFICATE and _CLIENT_KEY.
func newExporter(url string, getenv func(string) string) (*exporter, error) {
	env := func(name string) (string, string) {
		if v := getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + name, v
		}
		return "OTEL_EXPORTER_OTLP_" + name, getenv("OTEL_EXPORTER_OTLP_" + name)
	}
	e := &exporter{url: url, headers: http.Header{}, backoff: time.Second}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parseHeaders(e.headers, getenv(name)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	timeout := 10 * time.Second
	if name, v := env("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%s=%q: want milliseconds", name, v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	switch name, v := env("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("%s=%q: want gzip or none", name, v)
	}
	tlsConf, err := tlsConfig(env)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	e.client = &http.Client{Timeout: timeout, Transport: tr}
	return e, nil
}

// tlsConfig is the receiver's CA and mcpx's client certificate, as the
// environment names them; nil for the system's defaults.
func tlsConfig(env func(string) (string, string)) (*tls.Config, error) {
	_, ca := env("CERTIFICATE")
	_, cert := env("CLIENT_CERTIFICATE")
	_, key := env("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("the OTLP receiver's CA: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the OTLP receiver's CA: no PEM certificate in %s", ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("the OTLP client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

func parseHeaders(h http.Header, s string) error {
	for pair := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", pair)
		}
		v, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("the value of %q: %w", k, err)
		}
		h.Set(k, v)
	}
	return nil
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body := exportRequest(spans)
	if e.gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		_, _ = w.Write(body)
		_ = w.Close()
		body = z.Bytes()
	}
	wait := e.backoff
	for {
		retry, err := e.post(ctx, body)
		if err == nil || retry < 0 {
			return err
		}
		if retry == 0 {
			retry, wait = wait, min(2*wait, 30*time.Second)
		}
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("exporting %d spans: %w (the last try: %w)", len(spans), context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// post makes one try. On failure retry is how long the receiver asked to
// wait (0: not said), or -1 if trying again cannot help.
func (e *exporter) post(ctx context.Context, body []byte) (retry time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range e.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, err
		}
		return 0, err
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = fmt.Errorf("the OTLP receiver at %s answered %s: %s", e.url, resp.Status, bytes.TrimSpace(msg))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return 0, err
	}
	return -1, err
}

// Shutdown implements sdktrace.SpanExporter: nothing is held between
// batches but idle connections.
func (e *exporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}
