package hostserver

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"mcpx/internal/hosthttp"
)

// TestDeleteRacingClose: a host ending its session (DELETE) while the
// face closes. Each ended session's clean-up is counted where Close waits
// for it; run under the race detector, a count added after Close began
// to wait is a reported race. Both end, and nothing is left running.
func TestDeleteRacingClose(t *testing.T) {
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"d","version":"1"}}}`)
	for range 50 {
		face, stop := newFuzzHTTP()
		h := face.Handler(hosthttp.Access{})
		var sids []string
		for range 4 {
			w := post(h, init, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
			sid := w.Header().Get(hosthttp.HeaderSessionID)
			if w.Code != http.StatusOK || sid == "" {
				t.Fatalf("initialize: %d %s", w.Code, w.Body)
			}
			sids = append(sids, sid)
		}
		var wg sync.WaitGroup
		for _, sid := range sids {
			wg.Go(func() {
				r := httptest.NewRequest(http.MethodDelete, "http://127.0.0.1:7777/mcp", nil)
				r.Header.Set(hosthttp.HeaderSessionID, sid)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusNoContent && w.Code != http.StatusNotFound {
					t.Errorf("DELETE while closing: %d %s", w.Code, w.Body)
				}
			})
		}
		stop()
		wg.Wait()
	}
}
