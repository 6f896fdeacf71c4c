package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/relay"
)

// Replicas that share a key open each other's states; a held call's
// state names the replica that holds it, and another replica refuses it
// with an error that says so (not "forged", not "gone").
func TestSharedSealKey(t *testing.T) {
	r := relay.New(config.Default("mcpx"), nil, relay.NewRegistry(), nil)
	a := New(r, nil)
	b := New(r, nil)
	key := NewSealKey()
	for _, r := range []*Bridge{a, b} {
		if err := r.SetSealKey(key); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SetSealKey(key[:16]); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
	now := time.Now()
	args := []byte(`{"a":1}`)
	digest := requestDigest("demo", "gated", args)
	url := holdState{URL: []string{"mcpx-1"}, Principal: "http", Server: "demo", Tool: "gated", Digest: digest, Expires: now.Add(time.Minute).UnixMilli()}
	if _, err := b.sealer.Load().open(a.sealer.Load().seal(url), "http", digest, now); err != nil {
		t.Fatalf("B opening A's state: %v", err)
	}
	if _, err := New(r, nil).sealer.Load().open(a.sealer.Load().seal(url), "http", digest, now); !errors.Is(err, errStateForged) {
		t.Fatalf("a relay with another key: %v", err)
	}
	held := holdState{Hold: 1, Principal: "http", Server: "demo", Tool: "gated", Digest: digest,
		Expires: now.Add(time.Minute).UnixMilli(), Instance: a.instance}
	params, err := jsonrpc.ParseObject([]byte(`{"name":"gated","arguments":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := relay.Call{Server: "demo", Tool: "gated", Principal: "http", Params: params,
		Resume: &relay.Resume{State: a.sealer.Load().seal(held)}}
	_, err = b.resume(context.Background(), nil, c)
	if err == nil || !strings.Contains(err.Error(), "another mcpx replica") {
		t.Fatalf("B resuming A's held call: %v", err)
	}
}
