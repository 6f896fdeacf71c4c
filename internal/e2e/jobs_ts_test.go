package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/hostprofile"
	"mcpx/internal/mcpxtest"
)

// jobHostReport is what jobhost.mjs reports.
type jobHostReport struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	First timedResult
	Retry timedResult
	Polls []struct {
		Ms     int    `json:"ms"`
		Status string `json:"status"`
	} `json:"polls"`
	Final *timedResult `json:"final"`
}

type timedResult struct {
	Ms         int       `json:"ms"`
	Text       string    `json:"text"`
	IsError    bool      `json:"isError"`
	Structured *jobState `json:"structured"`
}

// TestJobTSHardTimerHost: TypeScript SDK v1 and v2 hosts whose hard timer
// is 2 s call a silent tool of 10 s, over stdio and HTTP. Each gets a job
// before its timer fires, its retry attaches to the job, mcpx_job never
// keeps it waiting past its timer and finally returns the tool's result;
// the upstream ran the tool once. The host's profile is given to the
// in-process gateway directly (a daemon takes it from its config).
func TestJobTSHardTimerHost(t *testing.T) {
	node, interop := mcpxtest.Node(t)
	mcpxtest.NodeModule(t, "@modelcontextprotocol/client", "package.json")
	const timer = 2 * time.Second
	for _, sdk := range []string{"v1", "v2"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(sdk+"/"+transport, func(t *testing.T) {
				e := mcpxtest.NewEnv(t)
				var mu sync.Mutex
				var names []string
				e.HostProfile = func(name string) hostprofile.Profile {
					mu.Lock()
					defer mu.Unlock()
					names = append(names, name)
					return hostprofile.Profile{Name: name, Timeout: timer, Source: "test: a hard timer scaled down"}
				}
				cfg := e.WriteConfig(nil, mcpxtest.Demo{Name: "demo"})
				spec := map[string]any{"sdk": sdk, "transport": transport, "tool": "demo__sleep_then", "seconds": 10,
					"timeoutMs": timer.Milliseconds(), "deadlineMs": 60000, "reportFile": e.Path("report.json")}
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				var r jobHostReport
				if transport == "http" {
					m := startHTTP(t, e, mcpxtest.InProcess, cfg, false)
					spec["url"], spec["token"] = m.URL, m.Token
					out := runJobHost(t, ctx, node, interop, spec, nil)
					if err := json.Unmarshal(out, &r); err != nil {
						t.Fatalf("report %q: %v", out, err)
					}
				} else {
					runJobHost(t, ctx, node, interop, spec, func(host io.ReadWriteCloser) error {
						files := config.DaemonFiles{Jobs: e.Path("jobs.db"), JobsLock: e.Path("jobs.lock")}
						log := slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
						return daemon.ServeStdio(ctx, &daemon.Options{Config: e.LoadConfig(cfg), Version: "test", Logger: log, Shim: e.Bin,
							Files: files, HostProfile: e.HostProfile}, host)
					})
					raw, err := os.ReadFile(e.Path("report.json"))
					if err != nil || json.Unmarshal(raw, &r) != nil {
						t.Fatalf("report %q: %v", raw, err)
					}
				}
				if !r.OK {
					t.Fatalf("jobhost.mjs failed: %s", r.Error)
				}
				limit := int(timer.Milliseconds())
				if r.First.Structured == nil || r.First.Structured.Status != "running" || r.First.Ms >= limit || !strings.Contains(r.First.Text, "mcpx_job") {
					t.Fatalf("first call: %+v, want a running job within %d ms", r.First, limit)
				}
				id := r.First.Structured.JobID
				if r.Retry.Structured == nil || r.Retry.Structured.JobID != id || r.Retry.Ms >= limit {
					t.Errorf("retry: %+v, want job %s within %d ms", r.Retry, id, limit)
				}
				for i, p := range r.Polls {
					if p.Ms >= limit {
						t.Errorf("mcpx_job poll %d took %d ms, past the host's timer", i, p.Ms)
					}
				}
				if r.Final == nil || r.Final.Text != "the export is done" || r.Final.IsError {
					t.Errorf("final: %+v after %d polls", r.Final, len(r.Polls))
				}
				if n := executions(e, "demo", "sleep_then"); n != 1 {
					t.Errorf("the upstream ran the tool %d times, want 1", n)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(names) == 0 || !strings.HasPrefix(names[0], "mcpx-interop-jobhost-") {
					t.Errorf("the profile was asked for %q, want the host's clientInfo.name", names)
				}
				t.Logf("%s %s: job after %d ms, retry attached after %d ms, %d polls (longest within the timer), result read", sdk, transport, r.First.Ms, r.Retry.Ms, len(r.Polls))
			})
		}
	}
}

// runJobHost runs jobhost.mjs with spec. With serve set, the host speaks
// on its stdin and stdout, which serve gets as the host's connection;
// otherwise its stdout (the report) is returned.
func runJobHost(t *testing.T, ctx context.Context, node, interop string, spec map[string]any, serve func(io.ReadWriteCloser) error) []byte {
	t.Helper()
	specJSON, _ := json.Marshal(spec)
	cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "jobhost.mjs"), string(specJSON))
	cmd.Dir = interop
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if serve == nil {
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("jobhost.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
		}
		return out
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serve(pipeConn{stdout, stdin}) }()
	if err := cmd.Wait(); err != nil {
		t.Errorf("jobhost.mjs: %v\nstderr: %s", err, stderr.String())
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("mcpx: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("mcpx did not return within 20s of the host leaving")
	}
	return nil
}

// pipeConn is a host's stdio as a connection: read its stdout, write its
// stdin.
type pipeConn struct {
	io.ReadCloser
	w io.WriteCloser
}

func (c pipeConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c pipeConn) Close() error {
	c.w.Close()
	return c.ReadCloser.Close()
}
