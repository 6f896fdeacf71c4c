package upstream

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/mcp"
)

// TestHTTPBodyLimits: a JSON body or an SSE event over the message limit
// fails the request, saying so.
func TestHTTPBodyLimits(t *testing.T) {
	big := strings.Repeat("x", 3000)
	up := newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		text := result(in, `{"content":[{"type":"text","text":"`+big+`"}]}`)
		if strings.Contains(string(in.Body), "sse") {
			sseOpen(w)
			sseSend(w, event("1", text))
			return
		}
		replyJSON(w, 200, text)
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL}, &Options{MaxMessageBytes: 2048})
	s := session(t, p)
	for _, name := range []string{"json", "sse"} {
		_, err := call(t, s, mcp.MethodToolsCall, `{"name":"`+name+`"}`)
		if err == nil || !strings.Contains(err.Error(), "2048-byte message limit") {
			t.Errorf("%s: err = %v, want the message limit", name, err)
		}
	}
}

// TestHTTPConcurrencyLimit: at most maxConcurrentRequests requests are in
// flight; the next waits for a slot, and a request cancelled while it
// waits was never sent, so nothing is posted for it.
func TestHTTPConcurrencyLimit(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, peak := 0, 0
	var up *scripted
	up = newScripted(t, legacyScript("2025-11-25", "sess", func(w http.ResponseWriter, in *inbound) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		select {
		case <-release:
		case <-up.quit:
		}
		replyJSON(w, 200, result(in, `{"content":[]}`))
	}))
	p := startPool(t, &config.Server{URL: up.ts.URL, MaxConcurrentRequests: 2}, nil)
	s := session(t, p)
	var reqs []*Request
	for i := range 4 {
		r, err := s.Start(mcp.MethodToolsCall, mustObject(fmt.Sprintf(`{"name":"t%d"}`, i)), nil, StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	up.waitFor("two calls", func(*inbound) bool { return up.count(isRPC(mcp.MethodToolsCall)) == 2 })
	time.Sleep(settle) // time: a third call must not arrive
	if n := up.count(isRPC(mcp.MethodToolsCall)); n != 2 {
		t.Fatalf("%d calls in flight, want 2", n)
	}
	// One of the other two waits for a slot: cancelling it tells nobody.
	var waiting, rest []*Request
	for _, r := range reqs {
		sent := up.count(func(in *inbound) bool {
			return in.rpcMethod() == mcp.MethodToolsCall && in.Msg.ID.String() == fmt.Sprint(r.ID)
		}) > 0
		if !sent && waiting == nil {
			waiting = append(waiting, r)
		} else {
			rest = append(rest, r)
		}
	}
	if s.Cancel(waiting[0], "never mind") {
		t.Error("Cancel of an unsent request reported the upstream told")
	}
	close(release)
	for _, r := range rest {
		select {
		case <-r.Done():
			if _, err := r.Result(); err != nil {
				t.Errorf("call %d: %v", r.ID, err)
			}
		case <-time.After(wait):
			t.Fatalf("call %d not answered", r.ID)
		}
	}
	time.Sleep(settle) // time: the cancelled call must not arrive late
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 {
		t.Errorf("peak of %d requests in flight, want 2", peak)
	}
	if n := up.count(isRPC(mcp.MethodToolsCall)); n != 3 {
		t.Errorf("%d calls reached the server, want 3 (the cancelled one never)", n)
	}
	if n := up.count(isRPC(mcp.MethodCancelled)); n != 0 {
		t.Errorf("%d cancellations posted for a request never sent", n)
	}
}
