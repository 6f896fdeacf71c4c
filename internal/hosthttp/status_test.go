package hosthttp

import (
	"net/http"
	"testing"
)

// TestErrorStatus: a 2026-07-28 response answered as one JSON body carries
// 400 for the errors that revision sends with it (an upstream's relayed
// -32021 too), and 200 otherwise.
func TestErrorStatus(t *testing.T) {
	for line, want := range map[string]int{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m","data":{"requiredCapabilities":{"sampling":{}}}}}`: http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"m"}}`:                                                 http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m"}}`:                                                 http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"}}`:                                                 http.StatusOK,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`:                                                               http.StatusOK,
	} {
		if got := ErrorStatus([]byte(line)); got != want {
			t.Errorf("ErrorStatus(%s) = %d, want %d", line, got, want)
		}
	}
}
