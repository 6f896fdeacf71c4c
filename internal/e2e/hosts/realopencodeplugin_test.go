package hosts

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/demo"
	"mcpx/internal/e2e/harness"
	"mcpx/internal/mcpxtest"
)

// TestRealOpencodePlugin: the real opencode (`opencode serve`, its
// Anthropic provider a stub on loopback that makes the tool calls its
// prompts name) loads the plugin `mcpx install opencode --plugin` wrote,
// and through mcpx's /v1:
//   - a long export's progress reaches opencode's event stream live, as
//     its tool part's title and metadata, in order, while it runs and up
//     to the last;
//   - a call silent past the plugin's job time comes back as a job, which
//     the model's mcpx_job call then waits on for the result (one upstream
//     execution);
//   - opencode's abort (POST /session/{id}/abort) mid-call reaches the
//     upstream as a cancel naming opencode, and so does SIGINT to opencode.
//
// Offline: opencode would install @opencode-ai/plugin into its config dir
// from npm at start; the dir is given the pinned copy the plugin's own
// tests use (integrations/opencode), which opencode then takes as
// installed.
func TestRealOpencodePlugin(t *testing.T) {
	t.Parallel()
	bin := mcpxtest.RealHost(t, "opencode")
	pluginModules := filepath.Join(mcpxtest.ModuleRoot(), "integrations", "opencode", "node_modules")
	if _, err := os.Stat(filepath.Join(pluginModules, "@opencode-ai", "plugin")); err != nil {
		msg := "integrations/opencode/node_modules is not installed: run `npm ci --prefix integrations/opencode`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	e := mcpxtest.NewEnv(t)
	stub := &promptStub{}
	model := httptest.NewServer(stub)
	defer model.Close()
	home := e.Vars["HOME"]
	confDir := filepath.Join(home, ".config", "opencode")
	file := filepath.Join(confDir, "opencode.json")
	writeFile(t, file, fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "anthropic/claude-sonnet-4-5",
  "provider": {"anthropic": {"options": {"baseURL": "%s/v1", "apiKey": "sk-stub"}}}
}
`, model.URL))
	const dep = `{"dependencies": {"@opencode-ai/plugin": "1.18.33"}}`
	writeFile(t, filepath.Join(confDir, "package.json"), dep+"\n")
	writeFile(t, filepath.Join(confDir, "package-lock.json"), `{"lockfileVersion": 3, "packages": {"": `+dep+"}}\n")
	if err := os.Symlink(pluginModules, filepath.Join(confDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo", Args: []string{"-record-progress"}})
	if out, stderr, code := e.Run(30*time.Second, "install", "opencode", "--plugin", "--file", file); code != 0 {
		t.Fatalf("mcpx install opencode --plugin: exit %d\n%s%s", code, out, stderr)
	}
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}

	base, serve := startOpencodeServe(t, e, bin, home, project,
		"MCPX_BIN="+e.Bin, "MCPX_CONFIG="+cfg, "MCPX_JOB_AFTER_SECONDS=3")
	ctx, stopEvents := context.WithCancel(context.Background())
	defer stopEvents()
	events := watchOpencode(t, ctx, base)
	session := func() string {
		var s struct {
			ID string `json:"id"`
		}
		opencodeJSON(t, base, "/session", "{}", &s)
		return s.ID
	}

	// Progress, live.
	const steps = 20
	sid := session()
	opencodeJSON(t, base, "/session/"+sid+"/message", prompt(fmt.Sprintf(`CALL demo__export {"seconds":10,"steps":%d}`, steps)), nil)
	done := events.wait(t, 3*time.Minute, "the export's completion", func(u toolUpdate) bool {
		return u.session == sid && u.tool == "demo__export" && u.status == "completed"
	})
	if !strings.Contains(done.output, fmt.Sprintf("in %d parts", steps)) || done.mcpx["progress"] != float64(steps) {
		t.Errorf("the completed part: output %q, metadata.mcpx %v; want the export's result and its last progress", done.output, done.mcpx)
	}
	// opencode sends the model the result after it has completed the part.
	for deadline := time.Now().Add(3 * time.Minute); len(stub.toolResults()) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if res := stub.toolResults(); len(res) != 1 || !strings.Contains(res[0], fmt.Sprintf("in %d parts", steps)) {
		t.Errorf("opencode sent the model the tool results %q, want the export's", res)
	}
	sent := map[float64]time.Time{}
	for _, r := range e.Records("demo") {
		if r.Event == demo.EventProgress && r.Progress != nil {
			at, _ := time.Parse(time.RFC3339Nano, r.At)
			sent[*r.Progress] = at
		}
	}
	var seen []float64
	var lat []time.Duration
	for _, u := range events.of(sid, done.callID) {
		p, ok := u.mcpx["progress"].(float64)
		if u.status != "running" || !ok {
			continue
		}
		if !strings.Contains(u.title, "Export records: ") {
			t.Errorf("a running update's title is %q, want the export's progress message", u.title)
		}
		seen = append(seen, p)
		if at, ok := sent[p]; ok {
			lat = append(lat, u.at.Sub(at))
		}
	}
	if len(seen) < 2 || seen[len(seen)-1] != steps || !slices.IsSorted(seen) || len(slices.Compact(slices.Clone(seen))) != len(seen) {
		t.Errorf("progress in opencode's tool part: %v, want increasing values while it ran, up to %d", seen, steps)
	}
	slices.Sort(lat)
	t.Logf("progress: the upstream sent %d notifications, opencode's event stream carried %d updates of the running tool part (%v)", len(sent), len(seen), seen)
	if len(lat) > 0 {
		t.Logf("progress: upstream notification -> opencode event, over %d: min %v, p50 %v, max %v", len(lat), lat[0], lat[len(lat)/2], lat[len(lat)-1])
	}

	// A silent call past the plugin's job time becomes a job; the model's
	// mcpx_job call gets the result.
	sid = session()
	waits := countRecords(e, "wait")
	opencodeJSON(t, base, "/session/"+sid+"/message", prompt(`CALL demo__wait {"seconds":6}`), nil)
	first := events.wait(t, 3*time.Minute, "the silent call's answer", func(u toolUpdate) bool {
		return u.session == sid && u.tool == "demo__wait" && u.status == "completed"
	})
	job, _ := first.mcpx["job"].(string)
	if !strings.HasPrefix(job, "job_") || !strings.Contains(first.output, job) {
		t.Fatalf("the silent call answered %q (metadata %v), want the job it became", first.output, first.mcpx)
	}
	waited := events.wait(t, 3*time.Minute, "mcpx_job's answer", func(u toolUpdate) bool {
		return u.session == sid && u.tool == "mcpx_job" && (u.status == "completed" || u.status == "error")
	})
	if waited.output != "waited 6 seconds" || countRecords(e, "wait") != waits+1 {
		t.Errorf("mcpx_job answered %q (%s) after %d upstream runs, want the wait's result after 1", waited.output, waited.status, countRecords(e, "wait")-waits)
	}

	// opencode's abort, mid-call.
	var abortLat []time.Duration
	for range 5 {
		sid = session()
		opencodeJSON(t, base, "/session/"+sid+"/message", prompt(`CALL demo__export {"seconds":60,"steps":600}`), nil)
		events.wait(t, 3*time.Minute, "the export's progress", func(u toolUpdate) bool {
			return u.session == sid && u.status == "running" && u.mcpx["progress"] != nil
		})
		up := lastRecord(e, "export")
		at := time.Now()
		opencodeJSON(t, base, "/session/"+sid+"/abort", "{}", nil)
		ev := harness.UpstreamCancel(e, "demo", up.ID)
		harness.CheckCancel(t, ev, "the client disconnected (opencode)")
		when, _ := time.Parse(time.RFC3339Nano, ev.At)
		abortLat = append(abortLat, when.Sub(at))
	}
	slices.Sort(abortLat)
	t.Logf("opencode's abort -> upstream notifications/cancelled over %d calls: min %v, p50 %v, max %v",
		len(abortLat), abortLat[0], abortLat[len(abortLat)/2], abortLat[len(abortLat)-1])

	// SIGINT to opencode, mid-call.
	sid = session()
	opencodeJSON(t, base, "/session/"+sid+"/message", prompt(`CALL demo__export {"seconds":60,"steps":600}`), nil)
	events.wait(t, 3*time.Minute, "the export's progress", func(u toolUpdate) bool {
		return u.session == sid && u.status == "running" && u.mcpx["progress"] != nil
	})
	up := lastRecord(e, "export")
	at := time.Now()
	if err := serve.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	ev := harness.UpstreamCancel(e, "demo", up.ID)
	harness.CheckCancel(t, ev, "the client disconnected (opencode)")
	when, _ := time.Parse(time.RFC3339Nano, ev.At)
	t.Logf("SIGINT to opencode -> upstream notifications/cancelled: %v", when.Sub(at))
}

func prompt(text string) string {
	b, _ := json.Marshal(map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}})
	return string(b)
}

func countRecords(e *mcpxtest.Env, tool string) int {
	n := 0
	for _, r := range e.Records("demo") {
		if r.Event == demo.EventRequest && r.Tool == tool {
			n++
		}
	}
	return n
}

// lastRecord is the demo's last request of tool.
func lastRecord(e *mcpxtest.Env, tool string) demo.Event {
	var last demo.Event
	for _, r := range e.Records("demo") {
		if r.Event == demo.EventRequest && r.Tool == tool {
			last = r
		}
	}
	return last
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// opencodeJSON POSTs body to opencode's server at path (a message is sent
// with prompt_async: the answer comes at once, the turn runs on) and
// decodes the answer into out.
func opencodeJSON(t *testing.T, base, path, body string, out any) {
	t.Helper()
	if strings.HasSuffix(path, "/message") {
		path = strings.TrimSuffix(path, "/message") + "/prompt_async"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("POST %s: %s: %v", path, b, err)
		}
	}
}

// startOpencodeServe starts `opencode serve` offline on a free port in
// dir, and waits until its server answers (its first request starts the
// project's instance, plugins and all).
func startOpencodeServe(t *testing.T, e *mcpxtest.Env, bin, home, dir string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	port := realFreePort(t)
	cmd := exec.Command(bin, "serve", "--hostname", "127.0.0.1", "--port", port, "--print-logs")
	cmd.Dir = dir
	cmd.Env = append(e.Environ(),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), // opencode's; the plugin names mcpx's config
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"NO_COLOR=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1")
	cmd.Env = append(cmd.Env, env...)
	logs := &harness.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("opencode serve's output:\n%s", logs.String())
		}
	})
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/session", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, cmd
			}
		}
		select {
		case <-exited:
			t.Fatalf("opencode serve exited:\n%s", logs.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("opencode serve did not answer within 3 minutes:\n%s", logs.String())
		}
	}
}
