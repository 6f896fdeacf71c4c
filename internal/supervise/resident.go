package supervise

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// DropStartupPages takes the executable's read-only pages (code, constant
// data, the runtime's tables) out of this process's resident set. Go runs
// the init of every linked package before main, and the kernel maps the
// pages those touch, and their neighbours, into every mcpx process: about
// 18 MB of a shim that then runs a few hundred kilobytes of code. The
// pages stay in the page cache; the process faults back in, from there,
// those it uses. Only what the file holds unchanged is dropped (no
// writable mapping), so nothing is lost. For the long-lived processes
// that run little of the binary: a shim, the daemon and serve. Not a
// sandbox child: it runs one script, and faulting the engine's pages back
// in would be on that script's path.
func DropStartupPages() {
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/exe", &st) != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || strings.Contains(fields[1], "w") {
			continue
		}
		if ino, err := strconv.ParseUint(fields[4], 10, 64); err != nil || ino != st.Ino {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	}
}
