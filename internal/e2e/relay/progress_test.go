package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// TestProgressBurst is the progress acceptance: 10 concurrent calls, each
// with 200 back-to-back upstream progress notifications. The host receives
// all 2,000, per token in order and strictly increasing, each before its
// call's result, under its own token with its exact JSON type (1 and "1"
// in the same run, and a 20-digit integer). Upstream, every call carried a
// fresh mcpx token instead.
func TestProgressBurst(t *testing.T) {
	const calls, count = 10, 200
	// Half strings, half integers: exact JSON bytes as the host writes them.
	tokens := []string{
		`"1"`, `"s-2"`, `"tök 3"`, `"mcpx-1"`, `"12345678901234567890"`,
		`1`, `12345678901234567890`, `42`, `-7`, `0`,
	}
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")

		ids := make([]jsonrpc.ID, calls)
		byToken := map[string]int{}
		for i, tok := range tokens {
			byToken[tok] = i
			ids[i] = h.Request("tools/call", map[string]any{
				"name":      "demo__burst",
				"arguments": map[string]any{"count": count},
				"_meta":     map[string]any{"progressToken": json.RawMessage(tok), harness.MarkerKey: fmt.Sprintf("burst-%d", i)},
			})
		}
		for i, id := range ids {
			if got, want := harness.ResultText(t, h.Result(id, harness.WaitLong)), fmt.Sprintf("sent %d", count); got != want {
				t.Errorf("call %d (token %s): result %q, want %q", i, tokens[i], got, want)
			}
		}

		// The host's side: every notification, in order, under its token.
		recv := h.Received()
		seen := make([]int, calls)
		answered := make([]bool, calls)
		total := 0
		for _, r := range recv {
			if r.Msg.IsResponse() {
				for i, id := range ids {
					if r.Msg.ID == id {
						answered[i] = true
					}
				}
				continue
			}
			p, ok := harness.AsProgress(t, r)
			if !ok {
				continue
			}
			total++
			i, known := byToken[string(p.Token)]
			if !known {
				t.Fatalf("progress under a token the host never sent: %s", r.Raw)
			}
			if answered[i] {
				t.Fatalf("progress for token %s after its call's result: %s", tokens[i], r.Raw)
			}
			seen[i]++
			if p.Progress != float64(seen[i]) {
				t.Fatalf("token %s: notification %d has progress %v, want %d (out of order, repeated or lost): %s",
					tokens[i], seen[i], p.Progress, seen[i], r.Raw)
			}
			if p.Total == nil || *p.Total != count {
				t.Errorf("token %s: total = %v, want %d: %s", tokens[i], p.Total, count, r.Raw)
			}
			if want := jsonrpc.MustMarshal(fmt.Sprintf("step %d", seen[i])); string(p.Message) != string(want) {
				t.Errorf("token %s: message = %s, want %s (a 2025-11-25 host gets the message)", tokens[i], p.Message, want)
			}
		}
		for i, n := range seen {
			if n != count {
				t.Errorf("token %s: host received %d progress notifications, want %d", tokens[i], n, count)
			}
		}
		if total != calls*count {
			t.Errorf("host received %d progress notifications in all, want %d", total, calls*count)
		}
		t.Logf("%s: %d calls, host received %d progress notifications (per token: %v), all in order before their results",
			mode, calls, total, seen)

		// The upstream's side: each call under a fresh token of mcpx's own.
		upTokens := map[string]bool{}
		for i := range tokens {
			ev := harness.UpstreamRequest(e, "demo", fmt.Sprintf("burst-%d", i))
			var tok string
			if err := json.Unmarshal(ev.ProgressToken, &tok); err != nil || !strings.HasPrefix(tok, "mcpx-") {
				t.Errorf("call %d: upstream progress token = %s, want a string minted by mcpx", i, ev.ProgressToken)
			}
			if upTokens[tok] {
				t.Errorf("call %d: upstream token %q used twice", i, tok)
			}
			upTokens[tok] = true
			if string(ev.ProgressToken) == tokens[i] {
				t.Errorf("call %d: the host's token %s went upstream as it was", i, tokens[i])
			}
		}
	})
}

// TestProgressOnlyWhenAsked: mcpx always asks the upstream for progress,
// but a host that sent no token gets none.
func TestProgressOnlyWhenAsked(t *testing.T) {
	mcpxtest.ForEachMode(t, func(t *testing.T, mode mcpxtest.Mode) {
		e := mcpxtest.NewEnv(t)
		cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
		h := e.StartHost(mode, cfg)
		h.Initialize("2025-11-25")
		id := h.Request("tools/call", map[string]any{
			"name":      "demo__burst",
			"arguments": map[string]any{"count": 50},
			"_meta":     map[string]any{harness.MarkerKey: "no-token"},
		})
		// The demo counts what it sent: mcpx asked it for progress.
		if got := harness.ResultText(t, h.Result(id, harness.WaitLong)); got != "sent 50" {
			t.Errorf("result %q, want \"sent 50\" (mcpx asks the upstream for progress on every call)", got)
		}
		ev := harness.UpstreamRequest(e, "demo", "no-token")
		if !strings.HasPrefix(string(ev.ProgressToken), `"mcpx-`) {
			t.Errorf("upstream progress token = %s, want one minted by mcpx", ev.ProgressToken)
		}
		for _, r := range h.Received() {
			if r.Msg.Method == "notifications/progress" {
				t.Errorf("host sent no progress token but received %s", r.Raw)
			}
		}
		if evs := harness.Cancellations(e, "demo"); len(evs) > 0 {
			t.Errorf("upstream got cancellations:\n%s", harness.Describe(evs))
		}
	})
}
