// Package mcpxtest runs mcpx for integration tests: it builds the mcpx
// binary once per test process (or takes the one MCPX_TEST_BINARY names,
// which scripts/test builds once for all the packages), gives each test
// private XDG directories, writes configs whose upstream is the bundled
// demo server (a real child process), and connects a raw JSON-RPC host to
// mcpx in each run mode: in-process (the gateway inside the test process,
// so the race detector and leak checks see it) and daemon (`mcpx serve`
// spawned, forwarding to a daemon it starts).
//
// Only tests import this package.
package mcpxtest
