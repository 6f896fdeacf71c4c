// Package bridge carries a relayed tool call across what its host and its
// upstream do not share: protocol revisions, an upstream's tasks, and an
// upstream's need of a sign-in. It wraps the relay's plain call: the relay
// hands it every tool call (it is the relay's relay.Bridge, set by the
// daemon), and it runs each through relay.Relay.Begin, the Live's rounds
// and Live.End, deciding between rounds; it reaches a call's session,
// slot, timers and questions only through the Live. The relay never
// imports it.
//
// Across eras (docs/protocol-notes.md §7.5): a 2026-07-28 upstream's
// input_required goes to a 2026-07-28 host as it is (its requestState
// sealed for that host, upstate.go), and for a legacy host becomes host
// requests, then a retry upstream (new id, inputResponses, the upstream's
// requestState byte for byte), round after round, at most 16 (mrtr.go).
// A legacy upstream's question to a 2026-07-28 host holds the upstream
// call (relay.ErrHold, then Live.Hold and Live.Queued) and answers the host
// input_required with a requestState sealed by AES-GCM (host principal,
// server, tool, arguments digest, expiry, a single-use hold id, the
// gateway that holds it); the retry resumes the held call (Live.Resume),
// and a host that never retries has it cancelled after mcpx.inputTimeout
// (hold.go, seal.go). A legacy upstream's -32042 (URL elicitation
// required) reaches a 2026-07-28 host as input_required, or -32021 if its
// request did not declare URL-mode elicitation; its retry calls the tool
// again (urlelicit.go). Only what the host declared, per request, is ever
// put to it. A state a host presents that mcpx did not seal, or sealed
// for another host, request or gateway, is refused with -32602.
//
// Replicas that share a store share the sealing key (SetSealKey): a state
// one seals opens on another, and a held call's retry that reaches the
// wrong replica is refused with a message that says so.
//
// Upstream tasks (upstreamtask.go): a tool whose 2025-11-25 server
// requires task-augmented calls is called as a task, and a 2026-07-28
// server's task is accepted; either is followed within the call (polled,
// its status passed on as progress, its questions put to the host) and
// its result returned as the call's, so the host gets a plain call. A
// call that ends first has the server's task cancelled.
//
// Sign-ins (signin.go, exchange.go): a call refused for want of a sign-in
// asks a host that declared URL-mode elicitation to open the sign-in's
// URL (-32042 to a legacy host, input_required to a 2026-07-28 one); a
// per-person server's refusal gets the person their own link, or, with a
// token exchange configured, a token exchanged for theirs and the call
// sent again, once. Without a starter set, the refusal reaches the host as
// the relay maps it (-31006).
//
// Concurrency: a Bridge is safe for concurrent use once set up; its
// setters are called before the relay serves.
package bridge
