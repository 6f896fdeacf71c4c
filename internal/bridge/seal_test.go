package bridge

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestSealedState: a sealed state opens only unaltered, unexpired, for
// the principal and request it was sealed for.
func TestSealedState(t *testing.T) {
	s := newSealer()
	now := time.Now()
	digest := requestDigest("demo", "ask", []byte(`{"a": 1}`))
	if digest != requestDigest("demo", "ask", []byte(`{"a":1}`)) {
		t.Error("the digest depends on insignificant spaces")
	}
	if digest == requestDigest("demo", "ask", []byte(`{"a":2}`)) || digest == requestDigest("dem", "oask", []byte(`{"a":1}`)) {
		t.Error("different requests share a digest")
	}
	st := holdState{Hold: 7, Principal: "conn:host-1", Server: "demo", Tool: "ask", Digest: digest, Expires: now.Add(time.Minute).UnixMilli()}
	token := s.seal(st)
	got, err := s.open(token, "conn:host-1", digest, now)
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Fatalf("open: %+v, %v", got, err)
	}
	// A -32042's state: the URL elicitations' keys, no held call.
	url := holdState{URL: []string{"mcpx-1", "mcpx-2"}, Principal: "http", Server: "demo", Tool: "gated", Digest: digest, Expires: st.Expires}
	if got, err := s.open(s.seal(url), "http", digest, now); err != nil || !reflect.DeepEqual(got, url) {
		t.Fatalf("open a URL state: %+v, %v", got, err)
	}
	if s.seal(st) == token {
		t.Error("two seals of one state are equal: the nonce is not fresh")
	}
	for i := len(statePrefix); i < len(token); i++ {
		b := []byte(token)
		b[i] ^= 1
		if _, err := s.open(string(b), "conn:host-1", digest, now); !errors.Is(err, errStateForged) {
			t.Fatalf("flipping byte %d: %v, want errStateForged", i, err)
		}
	}
	cases := []struct {
		name, token, principal, digest string
		at                             time.Time
		want                           error
	}{
		{"expired", token, "conn:host-1", digest, now.Add(2 * time.Minute), errStateExpired},
		{"other host", token, "conn:host-2", digest, now, errStateOther},
		{"other request", token, "conn:host-1", requestDigest("demo", "ask", []byte(`{}`)), now, errStateRequest},
		{"another key", newSealer().seal(st), "conn:host-1", digest, now, errStateForged},
		{"not mcpx's", "W10", "conn:host-1", digest, now, errStateForged},
		{"truncated", token[:len(statePrefix)+4], "conn:host-1", digest, now, errStateForged},
	}
	for _, c := range cases {
		if _, err := s.open(c.token, c.principal, c.digest, c.at); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
