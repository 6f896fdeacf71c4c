package replicas

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
)

// TestReplicasLegacySession: a 2025-11-25 host's HTTP session
// (Mcp-Session-Id) lives in the replica that answered its initialize.
// Through nginx with the affinity docs/replicas.md gives it (ip_hash:
// one client address, one replica), every request of the session reaches
// that replica: 20 calls all answered, all run by one upstream. Through
// nginx round-robin over the same replicas (no affinity), the requests
// that land on the other replica are answered at once with 404 and an
// error that says the session is not found and to send initialize: a
// clear answer, never a hang. Through HAProxy with the stick table the
// guide gives, sessions on both replicas keep to theirs.
func TestReplicasLegacySession(t *testing.T) {
	c := harness.StartClusterWith(t, harness.ClusterOpts{Balance: "ip_hash;", Jobs: map[string]any{"leaseTerm": "5s"}, AllowedHosts: []string{"127.0.0.1"}})
	rrPort := harness.FreePort(t)
	harness.StartNginx(t, harness.NginxBinary(t), rrPort, "", c.Replicas)
	ver := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	echo := func(i int) string {
		return harness.JsonText(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": map[string]any{"name": "demo__echo", "arguments": map[string]any{"i": i}}})
	}

	sticky := harness.NewRawHost(t, &harness.HTTPMCPX{URL: c.URL, Token: c.Token})
	sticky.Initialize("2025-11-25")
	const n = 20
	for i := range n {
		r := sticky.Do(echo(i), ver)
		if r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil || !strings.Contains(r.Body, fmt.Sprintf(`\"i\":%d`, i)) {
			t.Fatalf("call %d of the session through nginx with ip_hash: %d %s", i, r.Status, r.Body)
		}
	}
	total, each := c.Executions("echo")
	if total != n || (each[0] != n && each[1] != n) {
		t.Errorf("the session's %d calls ran %v per replica, want all on one", n, each)
	}
	t.Logf("ip_hash: %d calls of one session, executions per replica %v", n, each)

	rr := harness.NewRawHost(t, &harness.HTTPMCPX{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", rrPort), Token: c.Token})
	r := rr.Do(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	if rr.Sid = r.Header.Get("Mcp-Session-Id"); r.Status != http.StatusOK || rr.Sid == "" {
		t.Fatalf("initialize through nginx round-robin: %d %s", r.Status, r.Body)
	}
	// Round-robin sends the next two requests one to each replica: the
	// session's takes the notification, the other refuses it.
	got := map[int]int{}
	for range 2 {
		got[rr.Do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ver).Status]++
	}
	if got[http.StatusAccepted] != 1 || got[http.StatusNotFound] != 1 {
		t.Errorf("notifications/initialized twice through round-robin: %v, want one 202 and one 404", got)
	}
	var ok, lost int
	var slowest time.Duration
	for i := range n {
		start := time.Now()
		r := rr.Do(echo(100+i), ver)
		took := time.Since(start)
		switch {
		case r.Status == http.StatusOK && len(r.Msgs) > 0 && r.Msgs[len(r.Msgs)-1].Error == nil:
			ok++
		case r.Status == http.StatusNotFound:
			lost++
			slowest = max(slowest, took)
			m := r.Msgs
			if len(m) != 1 || m[0].Error == nil || m[0].Error.Code != jsonrpc.CodeInvalidRequest ||
				!strings.Contains(m[0].Error.Message, "session not found") || !strings.Contains(m[0].Error.Message, "send initialize") {
				t.Errorf("a request of the session on the other replica: 404 %s, want the error that says to send initialize", r.Body)
			}
			if took > 5*time.Second {
				t.Errorf("the 404 took %v", took)
			}
		default:
			t.Errorf("call %d of the session through nginx round-robin: %d %s", i, r.Status, r.Body)
		}
	}
	if lost == 0 || ok == 0 {
		t.Errorf("round-robin: %d answered in the session, %d refused; want both (each replica in turn)", ok, lost)
	}
	t.Logf("round-robin: %d of %d calls reached the session's replica, %d got 404 session not found (the slowest in %v)", ok, n, lost, slowest)

	t.Run("haproxy stick table", func(t *testing.T) { haproxySessions(t, c, echo) })
}

// haproxySessions: through HAProxy with the stick table the guide gives,
// four legacy sessions (their initializes round-robin, so both replicas
// hold some) each make 10 calls, every one answered in its session.
func haproxySessions(t *testing.T, c *harness.Cluster, echo func(int) string) {
	port := harness.FreePort(t)
	startHAProxy(t, port, c.Replicas)
	_, before := c.Executions("echo")
	ver := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	const sessions, calls = 4, 10
	for s := range sessions {
		h := harness.NewRawHost(t, &harness.HTTPMCPX{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Token: c.Token})
		h.Initialize("2025-11-25")
		for i := range calls {
			id := 1000 + s*calls + i
			r := h.Do(echo(id), ver)
			if r.Status != http.StatusOK || len(r.Msgs) == 0 || r.Msgs[len(r.Msgs)-1].Error != nil || !strings.Contains(r.Body, fmt.Sprintf(`\"i\":%d`, id)) {
				t.Fatalf("session %d, call %d through haproxy: %d %s", s, i, r.Status, r.Body)
			}
		}
	}
	_, after := c.Executions("echo")
	ran := []int{after[0] - before[0], after[1] - before[1]}
	if ran[0]+ran[1] != sessions*calls || ran[0] == 0 || ran[1] == 0 {
		t.Errorf("the sessions' calls ran %v per replica, want %d in all, on both", ran, sessions*calls)
	}
	t.Logf("haproxy stick table: %d sessions, %d calls each, all answered; executions per replica %v", sessions, calls, ran)
}
