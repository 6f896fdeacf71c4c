package bridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"mcpx/internal/seal"
)

// statePrefix starts every requestState mcpx seals.
const statePrefix = "mcpx1."

// sealAAD binds a sealed state to its purpose.
var sealAAD = []byte("mcpx requestState v1")

// holdState is what a requestState of mcpx's carries, sealed: the held
// call it names (or the URL elicitations it asked for), and what binds it
// (docs/protocol-notes.md §7.3): the host principal it was issued to, the
// server and tool, a digest of the request, and an expiry.
type holdState struct {
	Hold uint64 `json:"h"`
	// URL, set instead of Hold, are the inputRequests keys of the URL
	// elicitations an upstream's -32042 asked for (urlelicit.go): the
	// retry calls the tool again, so there is no held call to name.
	URL []string `json:"u,omitempty"`
	// Up, set instead of Hold, is a 2026-07-28 upstream's own
	// requestState (upstate.go), for its retry.
	Up        json.RawMessage `json:"r,omitempty"`
	Principal string          `json:"p"`
	Server    string          `json:"s"`
	Tool      string          `json:"t"`
	Digest    string          `json:"d"`
	Expires   int64           `json:"e"` // unix ms
	// Instance names the relay that holds the call Hold names: replicas
	// that share a key open each other's states, but a held call lives
	// in one process.
	Instance string `json:"i,omitempty"`
}

// sealer seals and opens requestState with AES-256-GCM under a key made
// when the relay starts (state outlives neither the process nor a held
// call, so the key need not either), or one replicas share (SetSealKey).
type sealer struct{ key *seal.Key }

// SealKeySize is the size of a requestState sealing key (AES-256).
const SealKeySize = seal.KeySize

// NewSealKey returns a fresh random sealing key.
func NewSealKey() []byte { return seal.RandomKey() }

func newSealer() *sealer {
	s, err := sealerWithKey(NewSealKey())
	if err != nil {
		panic(err)
	}
	return s
}

func sealerWithKey(key []byte) (*sealer, error) {
	k, err := seal.NewKey(key)
	if err != nil {
		return nil, err
	}
	return &sealer{key: k}, nil
}

func (s *sealer) seal(st holdState) string {
	plain, _ := json.Marshal(st)
	return statePrefix + base64.RawURLEncoding.EncodeToString(s.key.Seal(nil, plain, sealAAD))
}

// Why a requestState is refused.
var (
	errStateForged  = errors.New("requestState is not one mcpx issued, or was altered")
	errStateExpired = errors.New("requestState has expired")
	errStateOther   = errors.New("requestState was issued to another host")
	errStateRequest = errors.New("requestState was issued for a different request")
	errStateGone    = errors.New("requestState names a call that is no longer held")
	errStateReplica = errors.New("requestState names a call held by another mcpx replica: the retry must reach the replica that asked (see the load balancer's affinity)")
)

// open checks and reads a sealed state: authentic, unexpired at now, for
// principal and for a request with digest.
func (s *sealer) open(token, principal, digest string, now time.Time) (holdState, error) {
	var st holdState
	raw, ok := strings.CutPrefix(token, statePrefix)
	if !ok {
		return st, errStateForged
	}
	box, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return st, errStateForged
	}
	plain, err := s.key.Open(box, sealAAD)
	if err != nil || json.Unmarshal(plain, &st) != nil {
		return holdState{}, errStateForged
	}
	switch {
	case now.UnixMilli() > st.Expires:
		return st, errStateExpired
	case st.Principal != principal:
		return st, errStateOther
	case st.Digest != digest:
		return st, errStateRequest
	}
	return st, nil
}

// requestDigest digests what a retry must repeat of the request: the
// server, the tool and its arguments as sent.
func requestDigest(server, tool string, arguments json.RawMessage) string {
	var args bytes.Buffer
	if json.Compact(&args, arguments) != nil {
		args.Write(arguments)
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(server), []byte(tool), args.Bytes()} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
