package surface

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// surfaceTSReport is what test/interop/surfacehost.mjs prints.
type surfaceTSReport struct {
	OK           bool                       `json:"ok"`
	Error        string                     `json:"error"`
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	Resources    []string                   `json:"resources"`
	Templates    []string                   `json:"templates"`
	Reads        []struct {
		URI      string `json:"uri"`
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	} `json:"reads"`
	Prompts []string `json:"prompts"`
	Gets    []struct {
		Name     string `json:"name"`
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	} `json:"gets"`
	Completions [][]string `json:"completions"`
	Bad         map[string]struct {
		Refused bool   `json:"refused"`
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"bad"`
	Updated  *struct{ URI string } `json:"updated"`
	LogTool  string                `json:"logTool"`
	Messages []struct {
		Level string `json:"level"`
		Data  string `json:"data"`
	} `json:"messages"`
}

// TestTSSurfaceHost: the TypeScript SDK as a host of mcpx's resources,
// prompts, completion and logging — v1 over stdio and over HTTP (legacy
// sessions), v2 over HTTP pinned to 2026-07-28 — with
// @modelcontextprotocol/server-everything and the demo (legacy, so that
// its resources can be subscribed to) as upstreams.
func TestTSSurfaceHost(t *testing.T) {
	t.Parallel()
	node, interop := mcpxtest.Node(t)
	everything := mcpxtest.NodeModule(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	for _, c := range []struct{ sdk, transport string }{{"v1", "stdio"}, {"v1", "http"}, {"v2", "http"}} {
		t.Run(c.sdk+"-"+c.transport, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				cfgPath := e.Path("config.json")
				harness.TsWriteJSON(t, cfgPath, map[string]any{"mcpServers": map[string]any{
					"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}},
					"a": map[string]any{"command": e.Bin, "args": []string{"demo", "-surface", "-resource-host", "a", "-era", "legacy",
						"-wire-log", e.WireLogPath("a"), "-record", e.RecordPath("a")}, "env": map[string]string{"GORACE": mcpxtest.RaceQuickExit}},
				}})
				spec := map[string]any{
					"sdk": c.sdk, "transport": c.transport, "deadlineMs": 60000,
					"reads": []string{"demo://resource/dynamic/text/3", "demo://a/items/5"},
					"prompts": []any{
						map[string]any{"name": "everything__args-prompt", "arguments": map[string]string{"city": "Paris"}},
						map[string]any{"name": "a__greet", "arguments": map[string]string{"name": "ts"}},
					},
					"completions": []any{
						map[string]any{"ref": map[string]string{"type": "ref/prompt", "name": "everything__completable-prompt"}, "argument": map[string]string{"name": "department", "value": "E"}},
						map[string]any{"ref": map[string]string{"type": "ref/resource", "uri": "demo://a/items/{id}"}, "argument": map[string]string{"name": "id", "value": "1"}},
					},
					"bad": map[string]string{"uri": "demo://nowhere/x", "prompt": "nope", "cursor": "zzz"},
				}
				if c.transport == "stdio" {
					env := maps.Clone(e.Vars)
					env["GORACE"] = mcpxtest.RaceQuickExit
					spec["mcpx"], spec["config"], spec["inProcess"], spec["env"] = e.Bin, cfgPath, mode == mcpxtest.InProcess, env
					spec["touch"] = map[string]string{"tool": "a__touch", "uri": "demo://a/readme"}
					spec["log"] = map[string]any{"tool": "a__log", "level": "warning", "levels": []string{"info", "warning", "error"}}
				} else {
					m := harness.StartHTTP(t, e, mode, cfgPath, false)
					spec["url"], spec["token"] = m.URL, m.Token
				}
				if c.sdk == "v2" {
					spec["listen"] = map[string]string{"tool": "a__touch", "uri": "demo://a/readme"}
				}
				r := runSurfaceHost(t, e, node, interop, spec)

				for _, k := range []string{"resources", "prompts", "completions"} {
					if r.Capabilities[k] == nil {
						t.Errorf("capabilities lack %s: %v", k, r.Capabilities)
					}
				}
				for _, u := range []string{"demo://resource/static/document/architecture.md", "demo://a/readme", "demo://shared/motd"} {
					if !slices.Contains(r.Resources, u) {
						t.Errorf("resources lack %s (unchanged): %q", u, r.Resources)
					}
				}
				for _, u := range []string{"demo://resource/dynamic/text/{resourceId}", "demo://a/items/{id}"} {
					if !slices.Contains(r.Templates, u) {
						t.Errorf("templates lack %s: %q", u, r.Templates)
					}
				}
				if len(r.Reads) != 2 || r.Reads[0].Contents[0].URI != "demo://resource/dynamic/text/3" || !strings.Contains(r.Reads[0].Contents[0].Text, "3") ||
					r.Reads[1].Contents[0].Text != "Item 5 of a." {
					t.Errorf("reads by template = %+v", r.Reads)
				}
				if !slices.Contains(r.Prompts, "everything__simple-prompt") || !slices.Contains(r.Prompts, "a__greet") {
					t.Errorf("prompts = %q", r.Prompts)
				}
				if len(r.Gets) != 2 || !strings.Contains(r.Gets[0].Messages[0].Content.Text, "Paris") || r.Gets[1].Messages[0].Content.Text != "Say hello to ts from a." {
					t.Errorf("prompts/get = %+v", r.Gets)
				}
				if len(r.Completions) != 2 || !slices.Equal(r.Completions[0], []string{"Engineering"}) || !slices.Equal(r.Completions[1], []string{"1", "10"}) {
					t.Errorf("completions = %q", r.Completions)
				}
				notFound := int64(-32002)
				if c.sdk == "v2" {
					notFound = -32602
				}
				for k, code := range map[string]int64{"uri": notFound, "prompt": -32602, "cursor": -32602} {
					if b := r.Bad[k]; !b.Refused || b.Code != code {
						t.Errorf("bad %s: %+v, want refused with %d", k, b, code)
					}
				}
				wire := strings.Join(e.WireLog("a"), "\n")
				if !strings.Contains(wire, `"ref":{"type":"ref/resource","uri":"demo://a/items/{id}"}`) {
					t.Errorf("the demo never saw the completion's ref as the host sent it:\n%s", wire)
				}
				if c.sdk == "v2" || c.transport == "stdio" {
					if r.Updated == nil || r.Updated.URI != "demo://a/readme" {
						t.Errorf("resources/updated = %+v, want demo://a/readme", r.Updated)
					}
				}
				if c.sdk == "v2" { // closing the listen unsubscribes upstream
					waitWire(t, e, "a", `"method":"resources/unsubscribe","params":{"uri":"demo://a/readme"}`)
				}
				if c.transport != "stdio" {
					return
				}
				if r.LogTool != "sent: warning,error" || len(r.Messages) != 2 || r.Messages[0].Level != "warning" || r.Messages[1].Level != "error" {
					t.Errorf("log tool %q, messages %+v: want warning and error only", r.LogTool, r.Messages)
				}
				if !strings.Contains(wire, `"method":"logging/setLevel","params":{"level":"warning"}`) {
					t.Errorf("the demo was never set to warning")
				}
			})
		})
	}
}

func runSurfaceHost(t *testing.T, e *mcpxtest.Env, node, interop string, spec map[string]any) *surfaceTSReport {
	t.Helper()
	out, stderr, err := harness.RunHostScript(t, e, node, interop, "surfacehost.mjs", spec)
	if err != nil {
		t.Fatalf("surfacehost.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var r surfaceTSReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if !r.OK {
		t.Fatalf("surfacehost.mjs failed: %s\nstderr: %s", r.Error, stderr)
	}
	t.Logf("report: %s", out)
	return &r
}
