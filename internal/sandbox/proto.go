package sandbox

import "encoding/json"

// The protocol between parent and child: one JSON object per line.
//
// Parent to child: one "run", then any number of "reply" (the answer to a
// call) and at most one "stop". Child to parent: "call" (a host call, by
// id), "notify" (fire and forget), "log" (a console line) and, last,
// "done". The child exits after "done", or at once when its stdin ends.
type message struct {
	Op string `json:"op"`

	// run
	Code    string  `json:"code,omitempty"`
	Prelude string  `json:"prelude,omitempty"`
	Limits  *Limits `json:"limits,omitempty"`

	// call and reply
	ID     int64           `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`

	// notify
	Kind string          `json:"kind,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`

	// log
	Text string `json:"text,omitempty"`

	// done: Value is the script's value as JSON (absent for undefined),
	// or Fail says why it failed.
	Value json.RawMessage `json:"value,omitempty"`
	Fail  *failure        `json:"fail,omitempty"`

	// stop
	Reason string `json:"reason,omitempty"`
}

// failure is why a script did not finish.
type failure struct {
	Kind    string `json:"kind"` // failSyntax, failThrew, failLimit, failStopped, failStuck
	Message string `json:"message"`
	Limit   string `json:"limit,omitempty"`  // for failLimit: which
	Detail  string `json:"detail,omitempty"` // and its value, for people
}

const (
	opRun    = "run"
	opReply  = "reply"
	opStop   = "stop"
	opCall   = "call"
	opNotify = "notify"
	opLog    = "log"
	opDone   = "done"

	failSyntax  = "syntax"
	failThrew   = "threw"
	failLimit   = "limit"
	failStopped = "stopped"
	failStuck   = "stuck"
)
