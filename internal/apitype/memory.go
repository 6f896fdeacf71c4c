package apitype

// ProcessMemory is one process's memory, as /proc/PID/smaps_rollup says.
type ProcessMemory struct {
	Role   string `json:"role"`             // daemon, server or sandbox
	Server string `json:"server,omitempty"` // the server's name, for a server's process
	PID    int    `json:"pid"`
	// RSS is what is resident (what ps shows); PSS is its proportional
	// share: shared pages (the executable's, mapped by every mcpx
	// process) split among the processes that map them.
	RSS int64 `json:"rssBytes"`
	PSS int64 `json:"pssBytes"`
}
