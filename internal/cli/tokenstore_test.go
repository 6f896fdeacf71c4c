package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/hostconfig"
	"mcpx/internal/store"
	"mcpx/internal/store/storetest"
)

// TestInstallHTTPSharedStore: with a config that names a shared store,
// install --http mints the host's token here and puts its hash in the
// store, where every replica finds it; the store never holds the token.
func TestInstallHTTPSharedStore(t *testing.T) {
	pg := storetest.PostgresURL(t)
	vars := xdgVars(t)
	cfgFile := filepath.Join(vars["XDG_CONFIG_HOME"], "mcpx", "config.json")
	writeTestFile(t, cfgFile, []byte(`{"mcpx": {"store": "`+pg+`", "http": {"listen": "127.0.0.1:7777"}}}`))
	os.Chmod(cfgFile, 0o600)
	file := userFile(t, vars, hostconfig.Lookup("gemini"))
	writeTestFile(t, file, []byte("{}\n"))
	if _, errOut, code := run(t, vars, "install", "gemini", "--http"); code != 0 {
		t.Fatalf("install: exit %d %s", code, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(vars["XDG_STATE_HOME"], "mcpx", "tokens", "gemini"))
	if err != nil {
		t.Fatalf("no token was minted for gemini: %v", err)
	}
	tok := strings.TrimSpace(string(raw))
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), tok) {
		t.Fatalf("the host's file lacks its token:\n%s", data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.OpenPostgres(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if name, ok, err := st.TokenByHash(ctx, store.TokenHash(tok)); name != "gemini" || !ok || err != nil {
		t.Errorf("the store's token for gemini's hash: %q %v %v", name, ok, err)
	}
	var kept []byte
	if err := storetest.QueryRow(t, pg, `SELECT hash FROM host_tokens WHERE name = 'gemini'`, &kept); err != nil || !bytes.Equal(kept, store.TokenHash(tok)) {
		t.Errorf("the store keeps %x for gemini (%v), want the token's SHA-256", kept, err)
	}
	out, _, code := run(t, vars, "token", "--list")
	if code != 0 || !strings.HasPrefix(out, "gemini ") {
		t.Errorf("mcpx token --list: exit %d %q", code, out)
	}
}
