package surface

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

var updateGoldens = flag.Bool("update", false, "rewrite the transcript golden files in testdata/transcripts")

// The streams of a transcript, as named in its golden file.
const (
	streamHostToMcpx = "host-to-mcpx"
	streamMcpxToHost = "mcpx-to-host"
	streamUpstream   = "mcpx-upstream" // the demo's wire log: "< " it read, "> " it wrote
)

// mcpxVersion matches mcpx's own version in its serverInfo (to hosts) and
// clientInfo (to upstreams): "test" in-process, the build's in daemon mode.
// It is the only thing normalised: ids, tokens, reasons and every other
// byte are compared as they are.
var mcpxVersion = regexp.MustCompile(`("name":"mcpx"(?:,"title":"mcpx gateway")?,"version":)"[^"]*"`)

func normalizeLine(l string) string {
	l = mcpxVersion.ReplaceAllString(l, `${1}"VERSION"`)
	return sealedState.ReplaceAllString(l, `"requestState":"SEALED"`) // random each run
}

// transcriptCase is one golden conversation.
type transcriptCase struct {
	name   string
	header string
	demo   mcpxtest.Demo
	// run talks to mcpx and returns once every stream has settled.
	run func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host)
}

var transcriptCases = []transcriptCase{
	{
		name: "legacy-export-progress",
		header: `A legacy host (2025-11-25) calls the demo's export through mcpx with a
string progress token, against a legacy upstream (demo -era legacy).

mcpx probes the upstream with server/discover, falls back to initialize on
its -32601, then sends the call with its own id and its own progress token
("mcpx-3"). The three progress notifications reach the host in order,
under the host's token "host-tok-1", before the result; the result is
relayed byte for byte.`,
		demo: mcpxtest.Demo{Name: "demo", Args: []string{"-era", "legacy"}},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			h.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript-host","version":"1.0.0"}}}`)
			h.Result(jsonrpc.NewIntID(1), harness.TranscriptWait)
			h.SendRaw(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__export","arguments":{"seconds":0.3,"steps":3,"records":300},"_meta":{"progressToken":"host-tok-1"}}}`)
			h.Result(jsonrpc.NewIntID(2), harness.TranscriptWait)
		},
	},
	{
		name: "host-cancels",
		header: `A legacy host (2025-11-25) starts a long export with an integer progress
token (7), waits for its first progress, and cancels it with
notifications/cancelled; the upstream speaks 2026-07-28 (demo -era auto).

mcpx relays the progress under the host's integer token, then sends the
upstream notifications/cancelled with mcpx's own request id (2) and a
reason naming the cause and the host's words. The cancelled request gets
no response: the next message the host receives answers its ping.`,
		demo: mcpxtest.Demo{Name: "demo"},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			h.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript-host","version":"1.0.0"}}}`)
			h.Result(jsonrpc.NewIntID(1), harness.TranscriptWait)
			h.SendRaw(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			h.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo__export","arguments":{"seconds":60,"steps":2,"records":10},"_meta":{"progressToken":7}}}`)
			h.WaitFor(harness.TranscriptWait, "the first progress", func(r mcpxtest.Received) bool { return r.Msg.Method == "notifications/progress" })
			h.SendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user pressed stop"}}`)
			e.WaitRecord("demo", harness.TranscriptWait, func(ev demo.Event) bool {
				return ev.Event == demo.EventFinished && ev.Tool == "export" && ev.Outcome == demo.OutcomeCancelled
			})
			h.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			h.Result(jsonrpc.NewIntID(3), harness.TranscriptWait)
		},
	},
	{
		name: "modern-echo",
		header: `A 2026-07-28 host, without initialize: server/discover (answered by mcpx
itself), then a call of the demo's echo with arguments a lossy relay would
alter; the upstream speaks 2026-07-28 too.

Upstream, mcpx stamps its own protocol version, client info and the
capabilities it can bridge (none) on every request, and asks for progress
under its own token. The arguments reach the upstream, and come back in
structuredContent, byte for byte; the result keeps "resultType":"complete".`,
		demo: mcpxtest.Demo{Name: "demo"},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"transcript-host","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`
			h.SendRaw(`{"jsonrpc":"2.0","id":"d1","method":"server/discover","params":{` + meta + `}}`)
			h.Result(jsonrpc.NewStringID("d1"), harness.TranscriptWait)
			h.SendRaw(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"demo__echo","arguments":` + harness.EchoArgs + `,` + meta + `}}`)
			h.Result(jsonrpc.NewStringID("c1"), harness.TranscriptWait)
		},
	},
}

// TestTranscript records each main case's three streams (what the host
// sent, what it received, and what mcpx and the upstream said to each
// other) and compares them with testdata/transcripts/<case>.txtar, in both
// run modes: each stream is one direction or link, in wire order, so both
// modes must give the same golden. Regenerate with
//
//	go test ./internal/e2e/surface -run Transcript -update
func TestTranscript(t *testing.T) {
	for _, c := range append(slices.Clip(transcriptCases), surfaceTranscriptCases...) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mcpxtest.ForEachModeParallel(t, func(t *testing.T, mode mcpxtest.Mode) {
				e := mcpxtest.NewEnv(t)
				h := e.StartHost(mode, e.WriteConfig(nil, c.demo))
				c.run(t, e, h)
				tr := &mcpxtest.Transcript{Header: c.header, Streams: []mcpxtest.Stream{
					{Name: streamHostToMcpx, Lines: h.Sent()},
					{Name: streamMcpxToHost, Lines: h.ReceivedLines()},
					{Name: streamUpstream, Lines: e.WireLog(c.demo.Name)},
				}}
				for i := range tr.Streams {
					for j, l := range tr.Streams[i].Lines {
						tr.Streams[i].Lines[j] = normalizeLine(l)
					}
				}
				mcpxtest.CheckGolden(t, goldenPath(c.name), tr.Format(), *updateGoldens)
			})
		})
	}
}

func goldenPath(name string) string { return filepath.Join("testdata", "transcripts", name+".txtar") }

// TestTranscriptComparisonIsStrict checks that the goldens' comparison
// would catch what matters: a changed upstream request id, upstream
// progress token, host progress token or cancellation reason, and that
// normalising a golden again changes nothing.
func TestTranscriptComparisonIsStrict(t *testing.T) {
	edits := []struct {
		file, old, new string
	}{
		{streamUpstream, `"id":3,"method":"tools/call"`, `"id":4,"method":"tools/call"`},
		{streamUpstream, `"progressToken":"mcpx-3"`, `"progressToken":"mcpx-4"`},
		{streamMcpxToHost, `"progressToken":"host-tok-1"`, `"progressToken":"host-tok-2"`},
		{streamMcpxToHost, `"progressToken":7,`, `"progressToken":"7",`},
		{streamUpstream, `"requestId":2,`, `"requestId":"2",`},
		{streamUpstream, `the user pressed stop`, `the user pressed halt`},
		{streamUpstream, `"progressToken":"mcpx-2"}`, `"progressToken":"mcpx-1"}`},
	}
	used := make([]bool, len(edits))
	for _, c := range transcriptCases {
		golden, err := os.ReadFile(goldenPath(c.name))
		if err != nil {
			t.Fatalf("%v (regenerate with -update)", err)
		}
		renormalized := renormalize(t, golden, func(string, string) string { return "" })
		if d := mcpxtest.GoldenDiff(golden, renormalized); d != "" {
			t.Errorf("%s: normalising the golden again changes it:\n%s", c.name, d)
		}
		for i, ed := range edits {
			if !bytes.Contains(golden, []byte(ed.old)) {
				continue
			}
			used[i] = true
			edited := renormalize(t, golden, func(file, line string) string {
				if file == ed.file && strings.Contains(line, ed.old) {
					return strings.Replace(line, ed.old, ed.new, 1)
				}
				return ""
			})
			if mcpxtest.GoldenDiff(golden, edited) == "" {
				t.Errorf("%s: changing %s to %s in %s goes unnoticed", c.name, ed.old, ed.new, ed.file)
			}
		}
	}
	for i, ed := range edits {
		if !used[i] {
			t.Errorf("no golden holds %s: the goldens lost a case this test guards", ed.old)
		}
	}
}

// renormalize parses a golden, edits its lines (edit returns the new line,
// or "" to keep it), normalises every line as TestTranscript does and
// formats it again.
func renormalize(t *testing.T, golden []byte, edit func(file, line string) string) []byte {
	t.Helper()
	a := txtar.Parse(golden)
	tr := &mcpxtest.Transcript{Header: string(a.Comment)}
	for _, f := range a.Files {
		s := mcpxtest.Stream{Name: f.Name}
		for line := range strings.Lines(string(f.Data)) {
			line = strings.TrimSuffix(line, "\n")
			if l := edit(f.Name, line); l != "" {
				line = l
			}
			s.Lines = append(s.Lines, normalizeLine(line))
		}
		tr.Streams = append(tr.Streams, s)
	}
	return tr.Format()
}

// surfaceTranscriptCases are the goldens of resources, prompts and
// completion (surface_test.go has the rest of their tests).
var surfaceTranscriptCases = []transcriptCase{
	{
		name: "legacy-resources-prompts",
		header: `A legacy host (2025-11-25) uses resources, prompts and completion
through mcpx against a legacy upstream (demo -surface -era legacy).

mcpx lists the upstream's resources and templates once (cached), and
shows them with the upstream's own URIs: no other upstream exposes them.
A read by template, a prompt (named <server>__<prompt>) and a completion
go upstream with the upstream's names and come back byte for byte; so does
the upstream's own -32002 for a URI it does not have. The host subscribes
to a resource: mcpx subscribes upstream, relays the update, and
unsubscribes upstream when the host does.`,
		demo: mcpxtest.Demo{Name: "demo", Args: []string{"-surface", "-era", "legacy"}},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			step := func(id int, line string) {
				h.SendRaw(line)
				h.Response(jsonrpc.NewIntID(int64(id)), harness.TranscriptWait)
			}
			step(1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript-host","version":"1.0.0"}}}`)
			h.SendRaw(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			step(2, `{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{}}`)
			step(3, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"demo://demo/items/42"}}`)
			step(4, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"demo://demo/missing"}}`)
			step(5, `{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"demo__greet","arguments":{"name":"Ada"}}}`)
			step(6, `{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"demo__greet"},"argument":{"name":"name","value":"al"}}}`)
			step(7, `{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"demo://demo/readme"}}`)
			step(8, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"demo__touch","arguments":{"uri":"demo://demo/readme"}}}`)
			h.WaitFor(harness.TranscriptWait, "the update", func(r mcpxtest.Received) bool { return r.Msg.Method == "notifications/resources/updated" })
			step(9, `{"jsonrpc":"2.0","id":9,"method":"resources/unsubscribe","params":{"uri":"demo://demo/readme"}}`)
		},
	},
	{
		name: "modern-host-legacy-upstream-resources",
		header: `A 2026-07-28 host reads resources and gets a prompt through mcpx from a
legacy upstream (demo -surface -era legacy).

Upstream, the requests carry no 2026 _meta. To the host, every result gains
"resultType":"complete" and a read the ttlMs and cacheScope that revision
requires; the upstream's -32002 for a missing resource becomes -32602, as
2026-07-28 says, its message and data kept.`,
		demo: mcpxtest.Demo{Name: "demo", Args: []string{"-surface", "-era", "legacy"}},
		run: func(t *testing.T, e *mcpxtest.Env, h *mcpxtest.Host) {
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"transcript-host","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`
			for i, line := range []string{
				`{"jsonrpc":"2.0","id":"r1","method":"resources/read","params":{"uri":"demo://demo/readme",` + meta + `}}`,
				`{"jsonrpc":"2.0","id":"r2","method":"resources/read","params":{"uri":"demo://demo/missing",` + meta + `}}`,
				`{"jsonrpc":"2.0","id":"p1","method":"prompts/get","params":{"name":"demo__plain",` + meta + `}}`,
			} {
				h.SendRaw(line)
				h.Response(jsonrpc.NewStringID([]string{"r1", "r2", "p1"}[i]), harness.TranscriptWait)
			}
		},
	},
}
