// Package hoststream is the host's stdio link: how a host that runs
// `mcpx serve` reaches the daemon, on both sides.
//
// Serve's side ([Serve], from cli's serve verb): the host's stdin and
// stdout ([Stdio]) are handed to the daemon where they can be
// (handover.go), so that the daemon reads and writes them itself;
// otherwise, or when the daemon gives them back, serve forwards message
// by message (forward.go). Either way, when the daemon stops or dies,
// serve answers every request the host is still waiting for with an mcpx
// error (mcp.CodeUpstreamFailed), and the host's next message reconnects,
// starting a daemon if need be, and replays the host's initialize
// (apitype.HandoffReplayID) so that its session goes on.
//
// The daemon's side ([ServeHandoff], from localapi's stdio upgrade):
// it takes the host's descriptors and the handoff table (table.go) over
// the socket and serves the host on them through hostserver, reporting on
// the socket only what serve needs to take the host back.
//
// One ledger (pending.go): both sides learn which host requests await an
// answer, and the host's handshake, through the ledger interface, fed by
// saw from messages already decoded (the daemon's from hostserver's
// Witness, serve's from what it forwards). What was answered each side
// learns where the answer is written: serve from the daemon's lines, the
// daemon from the bytes it writes to the host, by the line's start only
// (jsonrpc.ResponseID), because an id leaves the table only when its
// answer's last byte is out.
//
// Ownership: Serve owns the goroutines it starts (the host reader and the
// daemon pump) and waits for them before it returns; ServeHandoff owns
// the socket watcher and waits for it. Neither imports the daemon: serve
// reaches it through [Options] (localclient's types satisfy [Stream] and
// [Events]), the daemon passes the function that serves a host.
package hoststream
