package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"mcpx/internal/apitype"
)

// printMemory prints what each of mcpx's processes costs: resident
// memory (what ps shows) and its proportional share, which splits the
// pages mcpx's processes share (the executable's) among them.
func printMemory(w io.Writer, procs []apitype.ProcessMemory) {
	if len(procs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nMEMORY (of each of mcpx's processes, from /proc)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESS\tPID\tRESIDENT\tSHARE (PSS)")
	for _, p := range procs {
		what := p.Role
		switch p.Role {
		case "server":
			what = "server " + p.Server
		case "sandbox":
			what = "sandbox child (warm)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", what, p.PID, mib(p.RSS), mib(p.PSS))
	}
	tw.Flush()
}

// mib is n bytes in MB (of 2^20 bytes), as the benchmarks give memory.
func mib(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
