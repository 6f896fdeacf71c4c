package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

func toolNames() []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.name)
	}
	return names
}

func TestToolDefs(t *testing.T) {
	all := append(append(slices.Clip(tools), surfaceTools...), taskTools...)
	if len(toolDefs()) != len(all) {
		t.Errorf("%d definitions for %d tools", len(toolDefs()), len(all))
	}
	for _, tl := range all {
		var def mcp.Tool
		if err := json.Unmarshal([]byte(toolDefs()[tl.name]), &def); err != nil || def.Name != tl.name {
			t.Errorf("definition of %s: name %q, err %v", tl.name, def.Name, err)
		}
	}
	if toolDefs()["echo"] != EchoToolJSON || !json.Valid([]byte(RawResultJSON)) {
		t.Error("echo definition or raw result literal is wrong")
	}
}

func TestToolsList(t *testing.T) {
	p := startPeer(t, nil)
	res := result(t, p.call("1", req("1", "tools/list", `{}`)))
	if !bytes.Contains(res, []byte(EchoToolJSON)) {
		t.Errorf("tools/list does not hold EchoToolJSON byte for byte:\n%s", res)
	}
	var list struct {
		Tools      []mcp.Tool `json:"tools"`
		NextCursor *string    `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range list.Tools {
		got = append(got, tl.Name)
	}
	want := []string{"export", "scan", "stubborn", "wait", "cancellations", "echo", "burst", "raw", "crash", "garbage", "fail", "sleep_then", "ask", "gated", "ask_later"}
	if diff := cmp.Diff(want, got); diff != "" || list.NextCursor != nil {
		t.Errorf("tools (-want +got):\n%s\nnextCursor %v", diff, list.NextCursor)
	}
}

func TestToolsListPages(t *testing.T) {
	p := startPeer(t, &Options{PageSize: 5})
	var names []string
	var sizes []int
	params := `{}`
	for i := range 10 {
		id := fmt.Sprint(i + 1)
		var page struct {
			Tools      []mcp.Tool `json:"tools"`
			NextCursor *string    `json:"nextCursor"`
		}
		if err := json.Unmarshal(result(t, p.call(id, req(id, "tools/list", params))), &page); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Tools))
		for _, tl := range page.Tools {
			names = append(names, tl.Name)
		}
		if page.NextCursor == nil {
			break
		}
		params = `{"cursor":` + string(marshal(*page.NextCursor)) + `}`
	}
	if diff := cmp.Diff([]int{5, 5, 5}, sizes); diff != "" {
		t.Errorf("page sizes (-want +got):\n%s", diff)
	}
	if !slices.Equal(names, toolNames()) {
		t.Errorf("paged names %v", names)
	}
	for _, c := range []string{`"nope"`, `""`, string(marshal(cursor(99))), string(marshal(cursor(0))), `7`} {
		if e := rpcError(t, p.call("20", req("20", "tools/list", `{"cursor":`+c+`}`))); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("cursor %s: %v, want -32602", c, e)
		}
	}
}

// progressOf decodes a progress notification.
func progressOf(t *testing.T, m *jsonrpc.Message) mcp.ProgressParams {
	t.Helper()
	var p mcp.ProgressParams
	if m.Method != mcp.MethodProgress || json.Unmarshal(m.Params, &p) != nil {
		t.Fatalf("not a progress notification: %s", m.Encode())
	}
	return p
}

func TestExport(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "export", `{"seconds":0.05,"steps":5,"records":100}`, `{"progressToken":"exp"}`))
	notes, m := p.until("1")
	if len(notes) != 5 {
		t.Fatalf("%d notifications, want 5", len(notes))
	}
	for i, n := range notes {
		progressOf(t, n)
		want := fmt.Sprintf(`{"progressToken":"exp","progress":%d,"total":5,"message":"exporting part %d of 5 (%d records)"}`, i+1, i+1, 20*(i+1))
		if string(n.Params) != want {
			t.Errorf("progress %d = %s, want %s", i, n.Params, want)
		}
	}
	if got, want := string(result(t, m)), `{"content":[{"type":"text","text":"exported 100 records in 5 parts"}],"structuredContent":{"records":100,"parts":5}}`; got != want {
		t.Errorf("export result\n%s\nwant\n%s", got, want)
	}
}

func TestScan(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "scan", `{"seconds":0.03,"steps":3}`, `{"progressToken":1}`))
	notes, m := p.until("1")
	var got []string
	for _, n := range notes {
		got = append(got, string(n.Params))
	}
	want := []string{
		`{"progressToken":1,"progress":7,"message":"scanned 7 files"}`,
		`{"progressToken":1,"progress":14,"message":"scanned 14 files"}`,
		`{"progressToken":1,"progress":21,"message":"scanned 21 files"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scan progress (-want +got):\n%s", diff)
	}
	if out := decodeTool(t, m); out.text() != "scanned 21 files" {
		t.Errorf("scan result %+v", out)
	}
}

func TestProgressTokensKeepTheirBytes(t *testing.T) {
	p := startPeer(t, nil)
	for i, tok := range []string{`"abc"`, `"1"`, `1`, `12345678901234567890`, `-1.5e3`, `"a<b&c\u00e9"`} {
		id := fmt.Sprint(i + 1)
		p.send(callReq(id, "burst", `{"count":2}`, `{"progressToken":`+tok+`}`))
		notes, m := p.until(id)
		if len(notes) != 2 {
			t.Fatalf("token %s: %d notifications", tok, len(notes))
		}
		for _, n := range notes {
			if prefix := `{"progressToken":` + tok + `,`; !bytes.HasPrefix(n.Params, []byte(prefix)) {
				t.Errorf("token %s: progress %s", tok, n.Params)
			}
		}
		e := p.event(func(e Event) bool { return e.Event == EventRequest && string(e.ID) == id })
		if string(e.ProgressToken) != tok {
			t.Errorf("recorded token %s, want %s", e.ProgressToken, tok)
		}
		result(t, m)
	}
}

func TestBurst(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "burst", `{}`, `{"progressToken":"b"}`))
	notes, m := p.until("1")
	if len(notes) != 200 {
		t.Fatalf("%d notifications, want 200", len(notes))
	}
	for i, n := range notes {
		pp := progressOf(t, n)
		if pp.Progress != float64(i+1) || pp.Total == nil || *pp.Total != 200 || pp.Message != fmt.Sprintf("step %d", i+1) {
			t.Fatalf("notification %d: %s", i, n.Params)
		}
	}
	if out := decodeTool(t, m); out.text() != "sent 200" {
		t.Errorf("burst result %+v", out)
	}
	// Without a token there is no progress.
	if out := decodeTool(t, p.call("2", callReq("2", "burst", `{"count":5}`, ""))); out.text() != "sent 0" {
		t.Errorf("burst without token %+v", out)
	}
}

func TestEcho(t *testing.T) {
	p := startPeer(t, nil)
	args := `{"n": 12345678901234567890, "s":"<&>\u00e9", "f":1.0e+2, "nested":{"x":[1, 2]}}`
	res := string(result(t, p.call("1", callReq("1", "echo", args, ""))))
	want := `{"content":[{"type":"text","text":` + string(marshal(args)) + `}],"structuredContent":` + args + `}`
	if res != want {
		t.Errorf("echo\n%s\nwant\n%s", res, want)
	}
	if res := string(result(t, p.call("2", req("2", "tools/call", `{"name":"echo"}`)))); res != `{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}` {
		t.Errorf("echo without arguments: %s", res)
	}
}

func TestRaw(t *testing.T) {
	p := startPeer(t, nil)
	if got := string(result(t, p.call("1", callReq("1", "raw", `{}`, "")))); got != RawResultJSON {
		t.Errorf("raw\n%s\nwant\n%s", got, RawResultJSON)
	}
	want := RawResultJSON[:len(RawResultJSON)-1] + `,"resultType":"complete"}`
	if got := string(result(t, p.call("2", callReq("2", "raw", `{}`, modernMeta(""))))); got != want {
		t.Errorf("modern raw\n%s\nwant\n%s", got, want)
	}
}

func TestSmallTools(t *testing.T) {
	p := startPeer(t, nil)
	tests := []struct {
		tool, args, text string
		isError          bool
	}{
		{"sleep_then", `{"seconds":0.01,"text":"hi"}`, "hi", false},
		{"sleep_then", `{"seconds":0}`, "done", false},
		{"wait", `{"seconds":0.01}`, "waited 0.01 seconds", false},
		{"fail", `{}`, "the fail tool always fails: this is a tool error (isError), not a protocol error", true},
		{"export", `{"steps":0}`, "export: invalid arguments: steps must be between 1 and 1000000, not 0", true},
		{"wait", `{"seconds":"x"}`, "", true},
		{"cancellations", `{}`, "[]", false},
	}
	for i, tt := range tests {
		id := fmt.Sprint(i + 1)
		out := decodeTool(t, p.call(id, callReq(id, tt.tool, tt.args, "")))
		if out.IsError != tt.isError || tt.text != "" && out.text() != tt.text {
			t.Errorf("%s %s = %+v", tt.tool, tt.args, out)
		}
	}
}

func TestGarbage(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "garbage", `{}`, ""))
	if got := string(p.line()); got != "this is not json" {
		t.Errorf("first line %q", got)
	}
	if out := decodeTool(t, p.msg()); out.IsError {
		t.Errorf("garbage result %+v", out)
	}
}

func TestCrash(t *testing.T) {
	codes := make(chan int, 1)
	p := startPeer(t, &Options{Exit: func(code int) { codes <- code }})
	p.send(callReq("1", "crash", `{"code":5,"after":0.01}`, `{"progressToken":"c"}`))
	if pp := progressOf(t, p.msg()); pp.Message != "crashing in 0.01 seconds with exit code 5" {
		t.Errorf("crash progress %+v", pp)
	}
	if e := p.event(finished("1")); e.Outcome != OutcomeExit {
		t.Errorf("crash event %+v", e)
	}
	select {
	case code := <-codes:
		if code != 5 {
			t.Errorf("exit code %d, want 5", code)
		}
	case <-time.After(deadline):
		t.Fatal("Exit was not called")
	}
	result(t, p.call("2", req("2", "ping", `{}`))) // no response for the crash itself
}

// TestSleepThenGate: a gated sleep_then answers once its gate file exists,
// not before (a later call is answered first), and with an error naming
// the gate when it stays closed past its seconds.
func TestSleepThenGate(t *testing.T) {
	p := startPeer(t, nil)
	gate := filepath.Join(t.TempDir(), "gate")
	args, _ := json.Marshal(map[string]any{"seconds": 60, "text": "opened", "gate": gate})
	p.send(callReq("1", "sleep_then", string(args), ""))
	if out := decodeTool(t, p.call("2", callReq("2", "sleep_then", `{"seconds":0,"text":"later"}`, ""))); out.text() != "later" {
		t.Fatalf("the ungated call answered %+v", out)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, m := p.until("1"); decodeTool(t, m).text() != "opened" {
		t.Errorf("the gated call answered %+v", decodeTool(t, m))
	}

	args, _ = json.Marshal(map[string]any{"seconds": 0.05, "gate": filepath.Join(t.TempDir(), "never")})
	if out := decodeTool(t, p.call("3", callReq("3", "sleep_then", string(args), ""))); !out.IsError || !strings.Contains(out.text(), "did not open within 0.05 seconds") {
		t.Errorf("a gate that stays closed: %+v", out)
	}
}
