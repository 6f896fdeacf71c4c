package harness

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
)

// ReachMcpx puts in a TypeScript host's spec how it reaches mcpx with
// config cfg: on stdio, by running mcpx serve (in-process, or handed to
// the daemon) in e's environment; over HTTP, at a gateway of mode's.
func ReachMcpx(t *testing.T, e *mcpxtest.Env, mode mcpxtest.Mode, transport, cfg string, spec map[string]any) {
	t.Helper()
	if transport == "stdio" {
		spec["mcpx"], spec["config"], spec["inProcess"], spec["env"] = e.Bin, cfg, mode == mcpxtest.InProcess, e.Vars
		return
	}
	m := StartHTTP(t, e, mode, cfg, false)
	spec["url"], spec["token"] = m.URL, m.Token
}

// RunHostScript runs a TypeScript host script of test/interop with spec as
// its argument, in e's environment, for at most 90 s, and returns what it
// printed on stdout and stderr.
func RunHostScript(t *testing.T, e *mcpxtest.Env, node, interop, script string, spec map[string]any) (out []byte, stderr string, err error) {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(interop, script), string(b))
	cmd.Dir = interop
	cmd.Env = e.Environ()
	cmd.WaitDelay = 10 * time.Second
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err = cmd.Output()
	return out, errb.String(), err
}
