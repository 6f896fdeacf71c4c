package ui

import (
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/relay"
)

// scrapePage returns the metrics page m serves.
func scrapePage(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// series counts the samples of the page that carry a tool label.
func series(page string) int {
	n := 0
	for line := range strings.Lines(page) {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, `tool="`) {
			n++
		}
	}
	return n
}

func call(o *Observer, server, tool string) {
	c := relay.CallInfo{ID: 1, Server: server, Tool: tool, Host: "host-1"}
	o.CallStarted(c)
	o.ProgressAdvanced(c)
	o.CallEnded(c, relay.OutcomeError, time.Millisecond, nil)
}

// TestMetricsLabelsMadeUpNames: calls of tools the catalog does not list
// (made up by a script), or with names too long for a label, are counted
// under one "other" label: 300 made-up names make the series of one tool,
// 20 names of 100 KB leave the page small; the tools the catalog lists
// keep their own labels, and an unknown server is "other" too.
func TestMetricsLabelsMadeUpNames(t *testing.T) {
	m := NewMetrics(func() apitype.Status { return apitype.Status{} })
	m.LabelOnly(func(server, tool string) (bool, bool) {
		return server == "demo", server == "demo" && (tool == "echo" || strings.HasPrefix(tool, "big"))
	})
	o := NewObserver(m, nil)
	call(o, "demo", "echo")
	perTool := series(scrapePage(t, m))

	for i := range 300 {
		call(o, "demo", "made_up_"+strconv.Itoa(i))
	}
	long := strings.Repeat("x", 100<<10)
	for i := range 20 {
		call(o, "demo", "big"+strconv.Itoa(i)+long) // listed, but too long for a label
		call(o, "nowhere"+strconv.Itoa(i), "echo")
	}
	page := scrapePage(t, m)
	if n := series(page); n > 3*perTool {
		t.Errorf("300 made-up and 20 long tool names made %d series with a tool label; one tool makes %d", n, perTool)
	}
	if len(page) > 64<<10 {
		t.Errorf("the metrics page is %d bytes after calls with 100 KB names", len(page))
	}
	for _, want := range []string{
		`mcpx_calls_total{outcome="error",server="demo",tool="echo"} 1`,
		`mcpx_calls_total{outcome="error",server="demo",tool="other"} 320`,
		`mcpx_calls_total{outcome="error",server="other",tool="other"} 20`,
		`mcpx_progress_relayed_total{server="other"} 20`,
		`mcpx_calls_in_flight{server="other"} 0`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no line %q", want)
		}
	}
	// A tool not listed (yet) that its upstream answered with a result
	// is one it has.
	c := relay.CallInfo{ID: 2, Server: "demo", Tool: "unlisted", Host: "host-1"}
	o.CallStarted(c)
	o.CallEnded(c, relay.OutcomeOK, time.Millisecond, nil)
	if page := scrapePage(t, m); !strings.Contains(page, `mcpx_calls_total{outcome="ok",server="demo",tool="unlisted"} 1`) {
		t.Error("a tool its upstream answered has no label of its own")
	}
	if strings.Contains(page, "made_up_") || strings.Contains(page, "nowhere") {
		t.Error("a name the catalog does not know is a label value")
	}
}

// TestMetricsLabelsBounded: names the catalog knows are labelled up to a
// bound; past it, new ones are "other" and those labelled keep theirs.
func TestMetricsLabelsBounded(t *testing.T) {
	m := NewMetrics(func() apitype.Status { return apitype.Status{} })
	o := NewObserver(m, nil) // no LabelOnly: every name is known
	for i := range maxToolLabels + 50 {
		call(o, "demo", "t"+strconv.Itoa(i))
	}
	call(o, "demo", "t0")
	page := scrapePage(t, m)
	if !strings.Contains(page, `mcpx_calls_total{outcome="error",server="demo",tool="t0"} 2`) {
		t.Error("a tool labelled before the bound lost its label")
	}
	if !strings.Contains(page, `mcpx_calls_total{outcome="error",server="demo",tool="other"} 50`) {
		t.Error("the tools past the bound are not counted as other")
	}
	if strings.Contains(page, `tool="t`+strconv.Itoa(maxToolLabels)+`"`) {
		t.Error("a tool past the bound has a label of its own")
	}
}
