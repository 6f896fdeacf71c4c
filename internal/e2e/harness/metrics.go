package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"mcpx/internal/apitype"
	"mcpx/internal/mcpxtest"
)

// The metrics exist in the daemon only (an in-process mcpx serves no
// socket and no page): these tests run against the daemon.

// DaemonStatus returns the status of the daemon of cfg, as mcpx status
// --json prints it.
func DaemonStatus(t *testing.T, e *mcpxtest.Env, cfg string) apitype.Status {
	t.Helper()
	out, errOut, code := e.Run(WaitLong, "status", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("mcpx status: exit %d: %s", code, errOut)
	}
	var st apitype.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status %s: %v", out, err)
	}
	return st
}

// SocketGet GETs path from the daemon's unix socket.
func SocketGet(t *testing.T, socket, path string) (int, []byte) {
	t.Helper()
	c := &http.Client{Timeout: WaitLong, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://localhost" + path)
	if err != nil {
		t.Fatalf("GET %s on the socket: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// Scrape is one metrics page, parsed.
type Scrape map[string]*dto.MetricFamily

func ParseMetrics(t *testing.T, page []byte) Scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("parsing the metrics page: %v\n%s", err, page)
	}
	return fams
}

// Value returns the value of the sample of name whose labels include
// labels ("k=v" each), 0 if there is none; for a histogram, its count.
func (s Scrape) Value(name string, labels ...string) float64 {
	f := s[name]
	if f == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range f.GetMetric() {
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}
