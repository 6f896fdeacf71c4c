package harness

import (
	"mcpx/internal/mcpxtest"
)

// HandoffWays are the two ways `mcpx serve` connects a host to the
// daemon: handing it its stdin and stdout (the default), or forwarding
// every message (MCPX_HANDOFF=off, and the way back after a handoff ends).
var HandoffWays = []string{"handoff", "forward"}

func SetHandoff(e *mcpxtest.Env, way string) {
	if way == "forward" {
		e.Vars["MCPX_HANDOFF"] = "off"
	}
}

const InitializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
