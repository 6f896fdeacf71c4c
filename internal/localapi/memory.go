package localapi

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"mcpx/internal/apitype"
)

// memory lists what each of mcpx's processes costs: this one, each
// server's process and each warm sandbox child.
func (h *Handler) memory(st *apitype.Status) {
	add := func(role, server string, pid int) {
		if m, ok := processMemory(pid); ok {
			m.Role, m.Server, m.PID = role, server, pid
			st.Memory = append(st.Memory, m)
		}
	}
	add("daemon", "", st.PID)
	for _, u := range st.Upstreams {
		if u.PID > 0 {
			add("server", u.Name, u.PID)
		}
	}
	if h.opts.Sandbox != nil {
		for _, pid := range h.opts.Sandbox() {
			add("sandbox", "", pid)
		}
	}
}

// processMemory reads pid's resident and proportional memory from
// /proc/PID/smaps_rollup; ok is false where there is none (not Linux,
// or the process is gone).
func processMemory(pid int) (m apitype.ProcessMemory, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return m, false
	}
	var rss, pss bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) != 3 || string(f[2]) != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			continue
		}
		switch string(f[0]) {
		case "Rss:":
			m.RSS, rss = kb<<10, true
		case "Pss:":
			m.PSS, pss = kb<<10, true
		}
	}
	return m, rss && pss
}
