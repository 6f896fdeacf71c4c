package harness

import (
	"testing"
	"time"

	"mcpx/internal/demo"
)

// Run is one execution of a tool at an upstream, as its records show it.
type Run struct {
	Replica    int
	Start, End time.Time // end: when it finished or was cancelled (zero: neither)
	Outcome    string
}

// Runs returns the executions of tool at every replica's upstream.
func (c *Cluster) Runs(t *testing.T, tool string) []Run {
	t.Helper()
	var out []Run
	for i, e := range c.Envs {
		byID := map[string]int{}
		for _, ev := range e.Records("demo") {
			at, _ := time.Parse(time.RFC3339Nano, ev.At)
			switch {
			case ev.Event == demo.EventRequest && ev.Tool == tool:
				byID[string(ev.ID)] = len(out)
				out = append(out, Run{Replica: i, Start: at})
			case ev.Event == demo.EventFinished && ev.Tool == tool:
				if k, ok := byID[string(ev.ID)]; ok && out[k].End.IsZero() {
					out[k].End, out[k].Outcome = at, ev.Outcome
				}
			case ev.Event == demo.EventCancelled && ev.Tool == tool && ev.Known != nil && *ev.Known:
				if k, ok := byID[string(ev.RequestID)]; ok && out[k].End.IsZero() {
					out[k].End, out[k].Outcome = at, "cancelled"
				}
			}
		}
	}
	return out
}
