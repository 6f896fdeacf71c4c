package harness

import (
	"testing"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// ProgressValues returns the progress values the host received under
// token, in order, and whether each came before the response to id.
func ProgressValues(t testing.TB, recv []mcpxtest.Received, token string, id jsonrpc.ID) (vals []float64, afterResult int) {
	t.Helper()
	answered := false
	for _, r := range recv {
		if r.Msg.IsResponse() && r.Msg.ID == id {
			answered = true
			continue
		}
		if p, ok := AsProgress(t, r); ok && string(p.Token) == token {
			vals = append(vals, p.Progress)
			if answered {
				afterResult++
			}
		}
	}
	return vals, afterResult
}
