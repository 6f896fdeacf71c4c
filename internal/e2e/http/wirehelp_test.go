package http

import (
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// progressBefore returns the progress values h received under token (its
// JSON), in order, failing the test for any that came after the response
// to id.
func progressBefore(t *testing.T, h *mcpxtest.Host, id jsonrpc.ID, token string) []float64 {
	t.Helper()
	recv := h.Received()
	resAt := harness.ResponseIndex(recv, id)
	var seen []float64
	for i, r := range recv {
		if p, ok := harness.AsProgress(t, r); ok && string(p.Token) == token {
			if i > resAt {
				t.Errorf("progress after the result: %s", r.Raw)
			}
			seen = append(seen, p.Progress)
		}
	}
	return seen
}
