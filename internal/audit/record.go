// Package audit is the audit log: one record per tool call, job event,
// refusal, sign-in and admin action, each naming who (principal, groups,
// host), where (face, server, tool), how it ended and how long it took,
// and the SHA-256 of the call's arguments, never their content.
//
// Records are made where the decision or the outcome is made once (the
// policy's refusals, the relay's call end, the job manager), queued
// (Add does not block nor write), and written in batches by Run to the
// sinks: a JSON-lines file (or standard output) and the store's audit
// table. A failed write is handled by the configured policy: fail closed
// (the default) keeps the records and retries them, and while any is
// unwritten or the queue is full Failing says why, which the policy
// turns into a refusal of every new tool call; fail open counts the
// records lost, logs a line and goes on.
//
// Concurrency: a Log is safe for concurrent use; a nil *Log records
// nothing.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"mcpx/internal/principal"
)

// Kind is what a record is of.
type Kind string

const (
	KindCall       Kind = "call"        // a tool call relayed upstream, as it ended
	KindJobStart   Kind = "job.start"   // a job started (a background call)
	KindJobPromote Kind = "job.promote" // a call kept past its host's timer became a job
	KindJobEnd     Kind = "job.end"     // a job ended
	KindJobCancel  Kind = "job.cancel"  // someone cancelled a job
	KindCallCancel Kind = "call.cancel" // someone cancelled another's call, or their own, by its id
	KindRefusal    Kind = "refusal"     // the policy refused an operation
	KindSignIn     Kind = "signin"      // a sign-in to an upstream ended
	KindSignOut    Kind = "signout"     // a sign-in to an upstream was forgotten
	KindAdmin      Kind = "admin"       // the operator acted on the daemon
	KindToken      Kind = "token"       // a host's bearer token was minted or revoked
)

// Record is one line of the audit log. It never holds a call's
// arguments nor its result: ArgsSHA256 stands for the arguments.
type Record struct {
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`
	// Principal is the ID of whom the operation acted for (a job's owner
	// for a job's records), Name its readable name, Groups its groups.
	Principal string   `json:"principal"`
	Name      string   `json:"name,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	// Host is the host's clientInfo.name, "" when not known.
	Host string `json:"host,omitempty"`
	// Face is how the principal reached mcpx (FaceOf).
	Face   string `json:"face,omitempty"`
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Action names the refused operation, or the admin action.
	Action string `json:"action,omitempty"`
	// Outcome is how it ended: a call's ("ok", "tool_error", "error",
	// "timeout", "cancelled", ...), a job's status, "refused",
	// "hidden" (refused as if the target did not exist), "failed".
	Outcome string `json:"outcome"`
	// Detail is mcpx's own words on it: why it was refused, who
	// cancelled. Never an upstream's message (it may echo arguments).
	Detail     string `json:"detail,omitempty"`
	DurationMS int64  `json:"durationMs,omitempty"`
	Job        string `json:"job,omitempty"`
	Replica    string `json:"replica,omitempty"`
	ArgsSHA256 string `json:"argsSha256,omitempty"`

	args []byte // the arguments, raw, hashed by the writer
}

// The faces principals reach mcpx by, as FaceOf names them.
const (
	FaceSocket = "socket" // the local API on the daemon's unix socket (the CLI, the live view)
	FaceStdio  = "stdio"  // a host on a stdio stream
	FaceMCP    = "socket-mcp"
	FaceHTTP   = "http" // a bearer token's holder on the HTTP listener
	FaceJob    = "job"  // a stored job run with no request behind it
	FaceCLI    = "cli"  // the CLI acting by itself, with no daemon (mcpx token, login, logout)
)

// FaceOf names the face that decided who: each kind of principal is
// decided by one face.
func FaceOf(who principal.Principal) string {
	switch {
	case who.IsRecorded():
		return FaceJob
	case who.Operator():
		return FaceSocket
	case who.ID() == principal.LocalID:
		return FaceStdio
	case who.ID() == principal.SocketID:
		return FaceMCP
	case who.IsZero():
		return ""
	}
	return FaceHTTP
}

// Who fills r's principal, name, groups, host and face from who.
func (r *Record) Who(who principal.Principal) {
	r.Principal, r.Name, r.Groups, r.Host, r.Face = who.ID(), who.Name(), who.Groups(), who.Client(), FaceOf(who)
	if r.Name == r.Principal {
		r.Name = ""
	}
}

// SetArgs keeps a copy of a call's arguments (raw JSON; nil for none),
// hashed as the record is written: Add's caller may reuse its bytes.
func (r *Record) SetArgs(args []byte) {
	if args == nil {
		args = []byte("{}")
	}
	r.args = bytes.Clone(args)
}

// ArgsHash is the SHA-256, in hex, of the canonical form of args (raw
// JSON): object members sorted by name, no insignificant space, strings
// written by one rule, numbers as written. Arguments that are not JSON
// are hashed as they are.
func ArgsHash(args []byte) string {
	sum := sha256.Sum256(Canonical(args))
	return hex.EncodeToString(sum[:])
}

// Canonical returns the canonical form of the JSON value raw (see
// ArgsHash); raw itself if it is not JSON.
func Canonical(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode sorted by key
		return raw
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
