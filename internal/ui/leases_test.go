package ui

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
)

// The metrics say whether the daemon holds its job leases and how far its
// clock is off the store's, as its status does.
func TestMetricsJobLeases(t *testing.T) {
	st := apitype.Status{JobLeases: &apitype.JobLeases{Lost: true, Renewed: time.Now(), SkewMs: -1500}}
	m := NewMetrics(func() apitype.Status { return st })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{"mcpx_job_leases_lost 1\n", "mcpx_job_store_clock_skew_seconds -1.5\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
