package relay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestEras: the same call, with progress, works for a host on every
// revision against upstreams of each era: legacy, modern (2026-07-28
// only) and auto (both; mcpx's probe finds it modern). Upstream, legacy
// servers get no io.modelcontextprotocol/ _meta keys, modern ones get the
// protocol version and client capabilities on every request.
func TestEras(t *testing.T) {
	t.Parallel()
	hosts := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
	upstreams := []mcpxtest.Demo{
		{Name: "leg", Args: []string{"-era", "legacy"}},
		{Name: "mod", Args: []string{"-era", "modern"}},
		{Name: "auto"},
	}
	modernUp := map[string]bool{"mod": true, "auto": true}
	mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		// The default probe timeout: mcpx's probe must not mistake a
		// modern upstream that is slow to start for a legacy one.
		cfg := e.WriteConfig(nil, upstreams...)
		for _, version := range hosts {
			modern := version == "2026-07-28"
			// meta is a request's _meta for this host's revision.
			meta := func(extra map[string]any) map[string]any {
				if modern {
					return mcpxtest.ModernMeta(extra)
				}
				return extra
			}
			h := e.StartHost(mode, cfg)
			if !modern {
				var init struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				if err := json.Unmarshal(h.Initialize(version), &init); err != nil || init.ProtocolVersion != version {
					t.Errorf("host %s: initialize agreed to %q, want %q", version, init.ProtocolVersion, version)
				}
			}
			list := h.Result(h.Request("tools/list", map[string]any{"_meta": meta(map[string]any{})}), harness.WaitLong)
			checkResultType(t, version, "tools/list", list, modern)
			for _, up := range upstreams {
				if !strings.Contains(string(list), fmt.Sprintf(`"name":"%s__export"`, up.Name)) {
					t.Errorf("host %s: tools/list lacks %s__export: %s", version, up.Name, list)
				}
			}
			for _, up := range upstreams {
				token := fmt.Sprintf("%s/%s", version, up.Name)
				marker := "era-" + token
				id := h.Request("tools/call", map[string]any{
					"name":      up.Name + "__export",
					"arguments": map[string]any{"seconds": 0.06, "steps": 3},
					"_meta":     meta(map[string]any{"progressToken": token, harness.MarkerKey: marker}),
				})
				res := h.Result(id, harness.WaitLong)
				if got := harness.ResultText(t, res); got != "exported 1000 records in 3 parts" {
					t.Errorf("host %s, upstream %s: result %q", version, up.Name, got)
				}
				checkResultType(t, version, "tools/call", res, modern)

				all := h.Received()
				resAt := harness.ResponseIndex(all, id)
				n := 0
				for i, r := range all {
					p, ok := harness.AsProgress(t, r)
					if !ok || string(p.Token) != string(mustJSON(token)) {
						continue
					}
					n++
					if version == "2024-11-05" && p.Message != nil {
						t.Errorf("host 2024-11-05 got a progress message (not in its revision): %s", r.Raw)
					}
					if version != "2024-11-05" && p.Message == nil {
						t.Errorf("host %s got progress without its message: %s", version, r.Raw)
					}
					if i > resAt {
						t.Errorf("host %s, upstream %s: progress after the result: %s", version, up.Name, r.Raw)
					}
				}
				if n != 3 {
					t.Errorf("host %s, upstream %s: %d progress notifications, want 3", version, up.Name, n)
				}

				ev := harness.UpstreamRequest(e, up.Name, marker)
				m := metaOf(t, ev)
				if modernUp[up.Name] {
					if string(m["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` {
						t.Errorf("host %s -> modern upstream %s: _meta protocolVersion = %s, want \"2026-07-28\": %s",
							version, up.Name, m["io.modelcontextprotocol/protocolVersion"], ev.Meta)
					}
					if _, ok := m["io.modelcontextprotocol/clientCapabilities"]; !ok {
						t.Errorf("host %s -> modern upstream %s: no clientCapabilities in _meta: %s", version, up.Name, ev.Meta)
					}
				} else {
					for k := range m {
						if strings.HasPrefix(k, "io.modelcontextprotocol/") {
							t.Errorf("host %s -> legacy upstream %s: _meta key %q sent: %s", version, up.Name, k, ev.Meta)
						}
					}
				}
			}
			h.Close()
		}

		// How each upstream was reached.
		for _, up := range upstreams {
			var discovers, inits int
			for _, ev := range e.Records(up.Name) {
				switch {
				case ev.Event == demo.EventRequest && ev.Method == "server/discover":
					discovers++
				case ev.Event == demo.EventInitialize:
					inits++
				}
			}
			if discovers == 0 {
				t.Errorf("upstream %s was never probed with server/discover", up.Name)
			}
			if modernUp[up.Name] && inits > 0 || !modernUp[up.Name] && inits == 0 {
				t.Errorf("upstream %s: %d initialize handshakes, modern=%v", up.Name, inits, modernUp[up.Name])
			}
			if evs := harness.Cancellations(e, up.Name); len(evs) > 0 {
				t.Errorf("upstream %s got cancellations:\n%s", up.Name, harness.Describe(evs))
			}
			t.Logf("%s: upstream %s: %d server/discover, %d initialize", mode, up.Name, discovers, inits)
		}
	})
}

// checkResultType checks that a result carries "resultType":"complete" for
// a 2026-07-28 host, and no resultType for a legacy one.
func checkResultType(t *testing.T, version, what string, res json.RawMessage, modern bool) {
	t.Helper()
	var r struct {
		ResultType *string `json:"resultType"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("host %s: %s result %s: %v", version, what, res, err)
	}
	switch {
	case modern && (r.ResultType == nil || *r.ResultType != "complete"):
		t.Errorf("host %s: %s result without \"resultType\":\"complete\": %s", version, what, res)
	case !modern && r.ResultType != nil:
		t.Errorf("host %s: %s result carries resultType: %s", version, what, res)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// eraCall calls server's export as a 2025-11-25 host and checks its result.
func eraCall(t *testing.T, h *mcpxtest.Host, server string) {
	t.Helper()
	id := h.Request("tools/call", map[string]any{
		"name":      server + "__export",
		"arguments": map[string]any{"seconds": 0.06, "steps": 3},
		"_meta":     map[string]any{"progressToken": 1, harness.MarkerKey: "era-" + server},
	})
	if got := harness.ResultText(t, h.Result(id, harness.WaitLong)); got != "exported 1000 records in 3 parts" {
		t.Errorf("%s: result %q", server, got)
	}
}

// TestErasDeafUpstream: a legacy upstream that never answers
// server/discover is reached once the probe times out; the unanswered
// probe is forgotten, not cancelled.
func TestErasDeafUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"probeTimeout": "300ms"},
			mcpxtest.Demo{Name: "deaf", Args: []string{"-era", "legacy", "-ignore-discover"}})
		h := e.StartHost(mode, cfg)
		// initialize starts the upstream (to learn its capabilities): the
		// probe's wait falls between it and the first call's result.
		start := time.Now()
		h.Initialize("2025-11-25")
		eraCall(t, h, "deaf")
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("initialize and the first call took %v, less than the 300ms probe timeout the deaf upstream needs", d)
		}
		var order []string
		for _, ev := range e.Records("deaf") {
			if ev.Event == demo.EventRequest || ev.Event == demo.EventCancelled {
				order = append(order, ev.Event+" "+ev.Method)
			}
		}
		if want := []string{"request server/discover", "request initialize", "request tools/call"}; !slices.Equal(order, want) {
			t.Errorf("the deaf upstream saw %q, want %q", order, want)
		}
		m := metaOf(t, harness.UpstreamRequest(e, "deaf", "era-deaf"))
		for k := range m {
			if strings.HasPrefix(k, "io.modelcontextprotocol/") {
				t.Errorf("legacy upstream got _meta key %q", k)
			}
		}
	})
}

// TestErasSlowModernUpstream: a modern-only upstream that answers
// server/discover only after the probe timeout (it is slow to start) is
// first taken for legacy; its refusal of initialize, naming the modern
// revisions it speaks, must bring mcpx back to the modern era instead of
// failing the upstream.
func TestErasSlowModernUpstream(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(map[string]any{"probeTimeout": "300ms"},
			mcpxtest.Demo{Name: "slow", Args: []string{"-era", "modern", "-init-delay", "800ms"}})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		eraCall(t, h, "slow")
		m := metaOf(t, harness.UpstreamRequest(e, "slow", "era-slow"))
		if string(m["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` {
			t.Errorf("the modern upstream got a call without the 2026-07-28 _meta: %s", mustJSON(m))
		}
	})
}
