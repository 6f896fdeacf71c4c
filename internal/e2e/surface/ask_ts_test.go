package surface

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// askHostReport is what test/interop/askhost.mjs prints.
type askHostReport struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Asked []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"asked"`
	Handled []struct {
		Method string `json:"method"`
	} `json:"handled"`
	InputRequired []struct {
		Keys         []string `json:"keys"`
		RequestState string   `json:"requestState"`
	} `json:"inputRequired"`
	Retries []string `json:"retries"`
	Results []struct {
		Name   string          `json:"name"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	} `json:"results"`
	CloseError string `json:"closeError"`
}

// What the TS host answers, recognisable wherever it shows up.
const (
	askName   = "Ada Lovelace (via mcpx)"
	askSample = "mcpx sampled this"
	askRoot   = "file:///work/ask-project"
)

// TestAskTSv1Host: server-everything (stdio behind a tap, or Streamable
// HTTP behind a recording proxy) asks for elicitation, sampling and roots
// during three tool calls; a TypeScript SDK v1 host (stdio or HTTP) that
// declared all three answers them through mcpx. The host sees each
// request under mcpx's own ids; the upstream gets each answer under its
// own id; each tool's result shows the host's answer.
func TestAskTSv1Host(t *testing.T) {
	t.Parallel()
	askMatrix(t, "v1", []string{"stdio", "http"})
}

// TestAskTSv2Host: the same with a TypeScript SDK v2 host pinned to
// 2026-07-28 (HTTP): it is never sent a request. mcpx holds each of
// server-everything's calls, answers the host input_required under keys
// of its own with a sealed requestState, and the SDK answers from the
// same handlers and retries; the upstream gets each answer under its own
// id, in the call it was waiting in.
func TestAskTSv2Host(t *testing.T) {
	t.Parallel()
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	askMatrix(t, "v2", []string{"http"})
}

func askMatrix(t *testing.T, sdk string, hostTransports []string) {
	node, interop := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	for _, hostTransport := range hostTransports {
		for _, up := range []string{"stdio", "http"} {
			t.Run(hostTransport+"-host/"+up+"-upstream", func(t *testing.T) {
				t.Parallel()
				mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
					// The proxy in front of an HTTP upstream is started first,
					// so that it is closed last, once mcpx has stopped.
					var tap *harness.WireTap
					if up == "http" {
						tap = harness.StartWireTap(t, harness.StartEverythingHTTP(t))
					}
					e := mcpxtest.NewEnv(t)
					var upstreamGot func() []string // the responses mcpx sent upstream
					var cfg string
					if up == "stdio" {
						tapPath := e.Path("tap.jsonl")
						cfg = harness.WriteServersConfig(t, e, map[string]any{"everything": map[string]any{
							"command": node, "args": []string{filepath.Join(interop, "tap.mjs"), tapPath, "--", node, everything, "stdio"},
						}})
						upstreamGot = func() []string {
							var out []string
							for _, en := range harness.ReadTapLog(t, tapPath).Entries {
								if en.Dir == "in" && en.Msg.Method == "" && len(en.Msg.ID) > 0 {
									out = append(out, en.Line)
								}
							}
							return out
						}
					} else {
						cfg = harness.WriteServersConfig(t, e, map[string]any{"everything": map[string]any{"type": "http", "url": tap.Url}})
						upstreamGot = func() []string {
							tap.Mu.Lock()
							defer tap.Mu.Unlock()
							var out []string
							for _, x := range tap.Posts {
								if x.Msg.IsResponse() {
									out = append(out, string(x.Msg.Encode()))
								}
							}
							return out
						}
					}
					spec := map[string]any{
						"sdk":          sdk,
						"transport":    hostTransport,
						"capabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}},
						"elicit":       map[string]any{"action": "accept", "content": map[string]any{"name": askName}},
						"sample":       map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": askSample}, "model": "none"},
						"roots":        []any{map[string]any{"uri": askRoot, "name": "project"}},
						"calls": []any{
							map[string]any{"name": "everything__trigger-elicitation-request"},
							map[string]any{"name": "everything__trigger-sampling-request", "arguments": map[string]any{"prompt": "2+2?", "maxTokens": 10}},
							map[string]any{"name": "everything__get-roots-list"},
						},
						"deadlineMs": 60000,
					}
					harness.ReachMcpx(t, e, mode, hostTransport, cfg, spec)
					r := runAskHost(t, node, interop, e, spec)
					if sdk == "v2" {
						if len(r.Asked) != 0 {
							t.Errorf("a 2026-07-28 host was sent requests: %+v", r.Asked)
						}
						// server-everything also asks for roots on its own
						// 350 ms after initialization; when that falls in a
						// call, mcpx asks it there, in a round of its own or
						// with the call's question, and get-roots-list then
						// answers from its cache. So: every question under a
						// key, one retry per input_required.
						keys := 0
						for _, ir := range r.InputRequired {
							keys += len(ir.Keys)
						}
						if keys < 3 || keys != len(r.Handled) || len(r.Retries) != len(r.InputRequired) {
							t.Errorf("input_required results %+v (%d keys), %d questions handled, retries %q: want every question under a key and one retry per input_required",
								r.InputRequired, keys, len(r.Handled), r.Retries)
						}
						for _, ir := range r.InputRequired {
							if len(ir.Keys) == 0 || !strings.HasPrefix(ir.Keys[0], "mcpx-") || !strings.HasPrefix(ir.RequestState, "mcpx1.") {
								t.Errorf("input_required %+v: want mcpx's keys and sealed state", ir)
							}
						}
						for _, st := range r.Retries {
							if !strings.HasPrefix(st, "mcpx1.") {
								t.Errorf("a retry carried requestState %q", st)
							}
						}
					}
					asked := map[string]bool{}
					ids := map[string]bool{}
					for _, a := range r.Handled {
						asked[a.Method] = true
					}
					for _, a := range r.Asked {
						if ids[string(a.ID)] {
							t.Errorf("mcpx reused id %s for %s", a.ID, a.Method)
						}
						ids[string(a.ID)] = true
					}
					for _, m := range []string{"elicitation/create", "sampling/createMessage", "roots/list"} {
						if !asked[m] {
							t.Errorf("the host was never asked %s; asked %+v", m, r.Asked)
						}
					}
					want := map[string]string{
						"everything__trigger-elicitation-request": askName,
						"everything__trigger-sampling-request":    askSample,
						"everything__get-roots-list":              askRoot,
					}
					for _, res := range r.Results {
						if res.Error != "" || !strings.Contains(string(res.Result), want[res.Name]) {
							t.Errorf("%s: %s %s, want a result showing %q", res.Name, res.Error, res.Result, want[res.Name])
						}
					}
					if len(r.Results) != 3 {
						t.Errorf("%d results, want 3", len(r.Results))
					}
					got := strings.Join(upstreamGot(), "\n")
					for _, w := range []string{askName, askSample, askRoot} {
						if !strings.Contains(got, w) {
							t.Errorf("the upstream never got an answer holding %q; mcpx sent it:\n%s", w, got)
						}
					}
					t.Logf("%s %s host, %s upstream, %s: %d requests to the host, %d input_required, %d answered by its handlers; upstream got %d responses",
						sdk, hostTransport, up, mode, len(r.Asked), len(r.InputRequired), len(r.Handled), len(upstreamGot()))
				})
			})
		}
	}
}

func runAskHost(t *testing.T, node, interop string, e *mcpxtest.Env, spec map[string]any) *askHostReport {
	t.Helper()
	out, stderr, err := harness.RunHostScript(t, e, node, interop, "askhost.mjs", spec)
	var r askHostReport
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("askhost.mjs (%v) printed no report: %v\nstdout: %s\nstderr: %s", err, jerr, out, stderr)
	}
	if err != nil || !r.OK {
		t.Fatalf("askhost.mjs: %v %s\nstderr: %s", err, r.Error, stderr)
	}
	return &r
}
