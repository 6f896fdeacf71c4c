package hostserver

import (
	"net/http/httptest"
	"testing"
)

// A replica behind a load balancer answers for the names it is given,
// beside its own address; every other name is still refused.
func TestAllowedHosts(t *testing.T) {
	a := Access{Addr: "127.0.0.1:7001", AllowedHosts: []string{"gateway.example.com", "127.0.0.1:8443", "[::1]", "lb:9000"}}
	for host, want := range map[string]bool{
		"gateway.example.com":      true,
		"GATEWAY.example.com:443":  true,
		"127.0.0.1:8443":           true,
		"127.0.0.1:7001":           true, // its own address
		"[::1]:5":                  true,
		"lb:9000":                  true,
		"lb:9001":                  false,
		"lb":                       false,
		"evil.example.com":         false,
		"gateway.example.com.evil": false,
		"127.0.0.1:8444":           false,
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = host
		status, msg, _ := a.check(r)
		if got := status == 0; got != want {
			t.Errorf("Host %q: status %d %q, want allowed=%v", host, status, msg, want)
		}
	}
}
