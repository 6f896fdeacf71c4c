package harness

import ()

// CodeTimeout is the error code of a call an mcpx timer ended.
const CodeTimeout = -31001
