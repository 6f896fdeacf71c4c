package harness

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpx/internal/mcpxtest"
	"mcpx/internal/oauth"
)

// SignIn is the part of the stored sign-in the test reads.
type SignIn struct {
	Client struct {
		ClientID string `json:"clientId"`
	} `json:"client"`
	Token struct {
		AccessToken  string    `json:"accessToken"`
		RefreshToken string    `json:"refreshToken"`
		Expiry       time.Time `json:"expiry"`
	} `json:"token"`
}

// SignInPath is where the daemon keeps the sign-ins of e.
func SignInPath(e *mcpxtest.Env) string {
	return filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "oauth", "secure.json")
}

// ReadSignIn reads the stored sign-in of e.
func ReadSignIn(t *testing.T, e *mcpxtest.Env) SignIn {
	t.Helper()
	var s SignIn
	b, err := os.ReadFile(SignInPath(e))
	if err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("reading the sign-in: %v", err)
	}
	return s
}

// Userinfo is the status of the provider's userinfo endpoint for token.
func Userinfo(t *testing.T, issuer, token string) int {
	req, _ := http.NewRequest(http.MethodGet, issuer+"userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// DaemonLogs returns the daemon's log.
func DaemonLogs(e *mcpxtest.Env) string {
	logs, _ := filepath.Glob(filepath.Join(e.Vars["XDG_STATE_HOME"], "mcpx", "daemon-*.log"))
	var all strings.Builder
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		all.Write(b)
	}
	return all.String()
}

// WriteKey writes a fresh sign-in key into dir and returns its path.
func WriteKey(t *testing.T, dir, name string) string {
	t.Helper()
	b := make([]byte, oauth.KeyBytes)
	_, _ = rand.Read(b)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
