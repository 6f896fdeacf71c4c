package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoHTTP runs `mcpx demo -http` in-process: it prints its address,
// serves a 2026-07-28 request there, and stops at the end of stdin.
func TestDemoHTTP(t *testing.T) {
	env, _, errb := fakeEnv(xdgVars(t))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env.Stdin, env.Stdout = inR, outW
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, []string{"demo", "-http", "127.0.0.1:0", "-era", "modern"}, env)
		outW.Close()
		done <- code
	}()
	br := bufio.NewReader(outR)
	line, err := br.ReadString('\n')
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+/mcp)\n$`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("address line %q (%v); stderr %s", line, err, errb)
	}
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(br)
		rest <- string(b)
	}()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, m[1], strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"name":"region_echo"`) {
		t.Errorf("tools/list over HTTP: %s %s", resp.Status, b)
	}

	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d; stderr %s", code, errb)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcpx demo -http did not stop at the end of stdin")
	}
	if s := <-rest; s != "" {
		t.Errorf("more output after the address line: %q", s)
	}
}
