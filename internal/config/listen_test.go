package config

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHostHTTP(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{}`, ""},
		{`{"mcpx": {"http": {}}}`, ""},
		{`{"mcpx": {"http": {"listen": ""}}}`, ""},
		{`{"mcpx": {"http": {"listen": "127.0.0.1:7777"}}}`, "127.0.0.1:7777"},
		{`{"mcpx": {"http": {"listen": ":7777"}}}`, "127.0.0.1:7777"},
		{`{"mcpx": {"http": {"listen": "LOCALHOST:0"}}}`, "localhost:0"},
		{`{"mcpx": {"http": {"listen": "[::1]:80"}}}`, "[::1]:80"},
		{`{"mcpx": {"http": {"listen": "0.0.0.0:7777"}}}`, "0.0.0.0:7777"},
	} {
		c, err := parse(tc.file)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if c.HTTP.Listen != tc.want {
			t.Errorf("%s: listen %q, want %q", tc.file, c.HTTP.Listen, tc.want)
		}
	}
	if c, err := parse(`{"mcpx": {"http": {"sessionIdle": "5m", "maxSessions": 50}}}`); err != nil || c.HTTP.SessionIdle != 5*time.Minute || c.HTTP.MaxSessions != 50 {
		t.Errorf("sessionIdle and maxSessions: %+v, %v", c.HTTP, err)
	}
	const f = "config " + testFile + ": "
	for _, tc := range []struct{ file, want string }{
		{`{"mcpx": {"http": "127.0.0.1:7777"}}`, f + `mcpx.http: must be an object`},
		{`{"mcpx": {"http": {"listne": "x"}}}`, f + `mcpx.http.listne: unknown field (did you mean "listen"?)`},
		{`{"mcpx": {"http": {"listen": 7777}}}`, f + `mcpx.http.listen: must be a string`},
		{`{"mcpx": {"http": {"listen": "7777"}}}`, f + `mcpx.http.listen: want host:port, e.g. 127.0.0.1:7777`},
		{`{"mcpx": {"http": {"listen": "127.0.0.1:http"}}}`, f + `mcpx.http.listen: invalid port "http" (want 0 to 65535)`},
		{`{"mcpx": {"http": {"listen": "127.0.0.1:65536"}}}`, f + `mcpx.http.listen: invalid port "65536" (want 0 to 65535)`},
		{`{"mcpx": {"http": {"listen": "example.com:80"}}}`, f + `mcpx.http.listen: invalid host "example.com" (want localhost or an IP address)`},
		{`{"mcpx": {"http": {"maxSessions": 0}}}`, f + `mcpx.http.maxSessions: must be an integer between 1 and 1000000`},
		{`{"mcpx": {"http": {"sessionIdle": "-1s"}}}`, f + `mcpx.http.sessionIdle: `},
	} {
		_, err := parse(tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.file, err, tc.want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": true, "127.1.2.3:1": true, "[::1]:1": true, "localhost:1": true,
		"0.0.0.0:1": false, "[::]:1": false, "192.0.2.1:1": false, "nonsense": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "mcpx", "token")
	// Several at once agree on one token.
	toks := make([]string, 8)
	var wg sync.WaitGroup
	for i := range toks {
		wg.Go(func() {
			tok, err := Token(path)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks {
		if tok != toks[0] || len(tok) != 43 {
			t.Fatalf("tokens %q: want one 43-character token", toks)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("token dir mode %v, want 0700", di.Mode().Perm())
	}
	if again, err := Token(path); err != nil || again != toks[0] {
		t.Errorf("second read %q, %v", again, err)
	}
	if other, _ := Token(filepath.Join(t.TempDir(), "token")); other == toks[0] {
		t.Error("two token files hold the same token")
	}
	os.Chmod(path, 0o644)
	if _, err := Token(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("world-readable token: %v, want refused", err)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	os.Chmod(path, 0o600)
	if _, err := Token(path); err == nil {
		t.Error("a short token was accepted")
	}
	if got := (Paths{StateDir: "/s/mcpx"}).TokenFile(); got != "/s/mcpx/token" {
		t.Errorf("TokenFile = %q", got)
	}
}
