package tracing

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	backoff time.Duration // the first wait between tries
}

// newExporter returns an exporter posting to url. Like OpenTelemetry's
// own exporters it adds the headers of OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_EXPORTER_OTLP_TRACES_HEADERS (key=value pairs, comma-separated,
// values URL-encoded), the latter winning.
func newExporter(url string, getenv func(string) string) (*exporter, error) {
	h := http.Header{}
	for _, env := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parseHeaders(h, getenv(env)); err != nil {
			return nil, fmt.Errorf("%s: %w", env, err)
		}
	}
	return &exporter{url: url, headers: h, client: &http.Client{Timeout: 10 * time.Second}, backoff: time.Second}, nil
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
