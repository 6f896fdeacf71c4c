package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// HTTP upstreams: mcpx as the HTTP client of real MCP servers. Here the
// servers are go-sdk v1.8.0 ones in the test process, behind a tap that
// records what reaches them: a stateful handler (legacy Streamable HTTP)
// and a stateless one with PropagateRequestCancellation (2026-07-28).

// sdkUpstream is a go-sdk server over HTTP and what it saw.
type sdkUpstream struct {
	url string

	mu    sync.Mutex
	posts []tappedPost
	calls map[string]*sdkCall // by marker
	wake  chan struct{}
}

// tappedPost is one POST that reached the server.
type tappedPost struct {
	At     time.Time
	Header http.Header
	Msg    *jsonrpc.Message
}

// sdkCall is one run of the slow tool.
type sdkCall struct {
	Token    any
	Progress int
	Ended    time.Time
	Outcome  string // "result" or "cancelled: <ctx cause>"
}

type slowArgs struct {
	Steps      int    `json:"steps"`
	IntervalMs int    `json:"interval_ms"`
	Marker     string `json:"marker"`
}

// startSDKUpstream serves a go-sdk server with the tools slow (progress,
// watching its context) and region (an x-mcp-header parameter) until the
// test ends. modern selects the stateless 2026-07-28 handler.
func startSDKUpstream(t *testing.T, modern bool) *sdkUpstream {
	t.Helper()
	up := &sdkUpstream{calls: map[string]*sdkCall{}, wake: make(chan struct{}, 1)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "counts steps, sending progress"},
		func(ctx context.Context, req *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			c := &sdkCall{Token: req.Params.GetProgressToken()}
			up.mu.Lock()
			up.calls[a.Marker] = c
			up.mu.Unlock()
			end := func(outcome string) {
				up.mu.Lock()
				c.Ended, c.Outcome = time.Now(), outcome
				up.mu.Unlock()
				up.poke()
			}
			for i := 1; i <= a.Steps; i++ {
				if c.Token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: c.Token, Progress: float64(i), Total: float64(a.Steps)})
					up.mu.Lock()
					c.Progress = i
					up.mu.Unlock()
					up.poke()
				}
				select {
				case <-ctx.Done():
					end("cancelled: " + context.Cause(ctx).Error())
					return nil, nil, ctx.Err()
				case <-time.After(time.Duration(a.IntervalMs) * time.Millisecond):
				}
			}
			end("result")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + a.Marker}}}, nil, nil
		})
	srv.AddTool(&mcp.Tool{Name: "region", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region " + string(req.Params.Arguments)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: modern, PropagateRequestCancellation: modern})
	ts := httptest.NewServer(up.tap(h))
	t.Cleanup(ts.Close)
	up.url = ts.URL + "/mcp"
	return up
}

func (up *sdkUpstream) poke() {
	select {
	case up.wake <- struct{}{}:
	default:
	}
}

// tap records every POST that reaches the server, then serves it.
func (up *sdkUpstream) tap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if msg, err := jsonrpc.Decode(body); err == nil {
				up.mu.Lock()
				up.posts = append(up.posts, tappedPost{At: time.Now(), Header: r.Header.Clone(), Msg: msg})
				up.mu.Unlock()
				up.poke()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// waitUntil waits until cond holds of the upstream's records.
func (up *sdkUpstream) waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(harness.WaitLong)
	defer deadline.Stop()
	for {
		up.mu.Lock()
		ok := cond()
		up.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-up.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline.C:
			t.Fatalf("upstream: no %s within %s", what, harness.WaitLong)
		}
	}
}

// call returns the run of the slow tool marked marker, once it ended.
func (up *sdkUpstream) ended(t testing.TB, marker string) sdkCall {
	t.Helper()
	var c sdkCall
	up.waitUntil(t, "end of call "+marker, func() bool {
		if p := up.calls[marker]; p != nil && !p.Ended.IsZero() {
			c = *p
			return true
		}
		return false
	})
	return c
}

// postsOf returns the tapped POSTs of a JSON-RPC method.
func (up *sdkUpstream) postsOf(method string) []tappedPost {
	up.mu.Lock()
	defer up.mu.Unlock()
	var out []tappedPost
	for _, p := range up.posts {
		if p.Msg.Method == method {
			out = append(out, p)
		}
	}
	return out
}

// callPost returns the tools/call POST of the call marked marker.
func (up *sdkUpstream) callPost(t testing.TB, marker string) tappedPost {
	t.Helper()
	for _, p := range up.postsOf("tools/call") {
		if strings.Contains(string(p.Msg.Params), `"marker":"`+marker+`"`) {
			return p
		}
	}
	t.Fatalf("no tools/call marked %s reached the upstream", marker)
	return tappedPost{}
}

// toolNames returns the names of a tools/list result.
func toolNames(t testing.TB, res json.RawMessage) []string {
	t.Helper()
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatalf("tools/list result %s: %v", res, err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestHTTPUpstreamGoSDK relays through mcpx to a go-sdk upstream over HTTP,
// legacy and 2026-07-28, in each run mode: tools/list; a tools/call whose
// progress reaches the host under its own token, in order, before the
// result; a call with an x-mcp-header parameter; and a host cancel that
// reaches the upstream by its era's mechanism: a notifications/cancelled
// POST with mcpx's id and the host's reason (legacy), the end of the POST
// and no notification (2026-07-28). Either way the tool's context ends.
func TestHTTPUpstreamGoSDK(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
				modern := era == "modern"
				up := startSDKUpstream(t, modern)
				e := mcpxtest.NewEnv(t)
				cfg := harness.WriteServersConfig(t, e, map[string]any{"up": map[string]any{"type": "http", "url": up.url}})
				h := e.StartHost(mode, cfg)
				h.Initialize("2025-11-25")

				names := toolNames(t, h.Result(h.Request("tools/list", map[string]any{}), harness.WaitLong))
				for _, want := range []string{"up__slow", "up__region"} {
					if !slices.Contains(names, want) {
						t.Errorf("tools/list lacks %s: %v", want, names)
					}
				}

				// Progress, then the result.
				id := harness.SendCall(h, `"p-1"`, "up__slow", map[string]any{"steps": 5, "interval_ms": 10, "marker": "p1"},
					map[string]any{"progressToken": "host-tok"})
				if got := harness.ResultText(t, h.Result(id, harness.WaitLong)); got != "done p1" {
					t.Errorf("result %q", got)
				}
				seen := progressBefore(t, h, id, `"host-tok"`)
				if !slices.Equal(seen, []float64{1, 2, 3, 4, 5}) {
					t.Errorf("progress at the host: %v, want 1..5", seen)
				}
				post := up.callPost(t, "p1")
				if tok := up.ended(t, "p1").Token; tok == "host-tok" || tok == nil {
					t.Errorf("the upstream saw progress token %v; mcpx must mint its own", tok)
				}
				if modern {
					for k, want := range map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "slow"} {
						if got := post.Header.Get(k); got != want {
							t.Errorf("%s = %q, want %q", k, got, want)
						}
					}
				} else if post.Header.Get("Mcp-Session-Id") == "" || post.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
					t.Errorf("legacy call headers: %v", post.Header)
				}

				// An x-mcp-header parameter.
				rid := h.Request("tools/call", map[string]any{"name": "up__region", "arguments": map[string]any{"region": "eu-west"}})
				if got := harness.ResultText(t, h.Result(rid, harness.WaitLong)); !strings.Contains(got, "eu-west") {
					t.Errorf("region result %q", got)
				}
				if modern {
					posts := up.postsOf("tools/call")
					if got := posts[len(posts)-1].Header.Get("Mcp-Param-Region"); got != "eu-west" {
						t.Errorf("Mcp-Param-Region = %q, want eu-west", got)
					}
				}

				// A host cancel.
				cid := harness.SendCall(h, "77", "up__slow", map[string]any{"steps": 1000, "interval_ms": 20, "marker": "c1"},
					map[string]any{"progressToken": 77})
				h.WaitFor(harness.WaitLong, "progress of the call to cancel", func(r mcpxtest.Received) bool {
					p, ok := harness.AsProgress(t, r)
					return ok && string(p.Token) == "77"
				})
				sent := time.Now()
				harness.Cancel(h, "77", "enough")
				c := up.ended(t, "c1")
				if !strings.HasPrefix(c.Outcome, "cancelled") {
					t.Fatalf("the upstream call ended with %q, want cancelled", c.Outcome)
				}
				upID := up.callPost(t, "c1").Msg.ID
				cancels := up.postsOf("notifications/cancelled")
				if modern {
					time.Sleep(harness.Settle) // time: the cancel must not be posted
					if cancels = up.postsOf("notifications/cancelled"); len(cancels) != 0 {
						t.Errorf("mcpx posted notifications/cancelled to a 2026-07-28 upstream: %s", cancels[0].Msg.Params)
					}
				} else {
					if len(cancels) != 1 {
						t.Fatalf("%d notifications/cancelled reached the upstream, want 1", len(cancels))
					}
					var p struct {
						RequestID json.RawMessage `json:"requestId"`
						Reason    string          `json:"reason"`
					}
					if err := json.Unmarshal(cancels[0].Msg.Params, &p); err != nil {
						t.Fatal(err)
					}
					if string(p.RequestID) != upID.String() || p.Reason != "cancelled by the host: enough" {
						t.Errorf("cancellation %s; want requestId %s (mcpx's, not the host's 77) and the host's reason", cancels[0].Msg.Params, upID)
					}
					if cancels[0].Header.Get("Mcp-Session-Id") == "" {
						t.Errorf("the cancellation carried no session id")
					}
				}
				h.NoResponse(cid, harness.Settle)
				t.Logf("%s %s: host cancel -> upstream tool context ended in %v (%s)", era, mode, c.Ended.Sub(sent), c.Outcome)

				// The session is still usable.
				if got := harness.ResultText(t, h.Result(h.Request("tools/call", map[string]any{"name": "up__slow",
					"arguments": map[string]any{"steps": 1, "interval_ms": 1, "marker": "after"}}), harness.WaitLong)); got != "done after" {
					t.Errorf("after the cancel: %q", got)
				}
			})
		})
	}
}

// TestHTTPUpstreamCancelLatency measures host cancel -> a 2026-07-28 go-sdk
// upstream's tool context ending (the POST aborted), over 50 cancels, and
// logs p50/p99. It checks each cancel; it asserts no time bound.
func TestHTTPUpstreamCancelLatency(t *testing.T) {
	const n = 50
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		up := startSDKUpstream(t, true)
		e := mcpxtest.NewEnv(t)
		cfg := harness.WriteServersConfig(t, e, map[string]any{"up": map[string]any{"type": "http", "url": up.url}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		lat := make([]time.Duration, 0, n)
		for i := range n {
			rawID := fmt.Sprint(5000 + i)
			marker := "lat" + rawID
			id := harness.SendCall(h, rawID, "up__slow", map[string]any{"steps": 100000, "interval_ms": 50, "marker": marker},
				map[string]any{"progressToken": json.RawMessage(rawID)})
			h.WaitFor(harness.WaitLong, "progress of call "+rawID, func(r mcpxtest.Received) bool {
				p, ok := harness.AsProgress(t, r)
				return ok && string(p.Token) == rawID
			})
			sent := time.Now()
			harness.Cancel(h, rawID, "latency")
			c := up.ended(t, marker)
			if !strings.HasPrefix(c.Outcome, "cancelled") {
				t.Fatalf("call %s ended with %q", rawID, c.Outcome)
			}
			lat = append(lat, c.Ended.Sub(sent))
			if i == n-1 {
				h.NoResponse(id, harness.Settle)
			}
		}
		if cancels := up.postsOf("notifications/cancelled"); len(cancels) != 0 {
			t.Errorf("%d notifications/cancelled posted to a 2026-07-28 upstream", len(cancels))
		}
		slices.Sort(lat)
		t.Logf("%s: host cancel -> 2026-07-28 HTTP upstream's tool context done, over %d cancels: p50 %v, p99 %v (min %v, max %v)",
			mode, n, harness.Quantile(lat, 0.50), harness.Quantile(lat, 0.99), lat[0], lat[len(lat)-1])
	})
}
