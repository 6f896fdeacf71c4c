package supervise

import (
	"os"
	"testing"
	"time"
)

// TestUpstreamInMcpxSession: the upstream (and its shim) run in a process
// group of their own but in mcpx's session, under a shim or not. A session
// of its own would be a scheduling group of its own where Linux groups
// sessions (autogroup), and each hand-off of a call between mcpx and the
// upstream would wait on the scheduler across groups.
func TestUpstreamInMcpxSession(t *testing.T) {
	self, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	sid := self.sid
	for name, sup := range supervisionModes(t) {
		t.Run(name, func(t *testing.T) {
			p := startSh(t, sup, "exec cat")
			want := 1 // cat
			if sup != nil {
				want = 2 // the shim and cat
			}
			procs := waitTagged(t, tagOf(t, p), want)
			if len(procs) != want {
				t.Fatalf("%d processes carry the tag, want %d: %+v", len(procs), want, procs)
			}
			for _, q := range procs {
				if q.sid != sid {
					t.Errorf("process %d is in session %d, want mcpx's %d", q.pid, q.sid, sid)
				}
				if q.pgid != p.PID() {
					t.Errorf("process %d is in group %d, want the child's own %d", q.pid, q.pgid, p.PID())
				}
			}
			p.Stdin.Close()
			waitDone(t, p, 10*time.Second)
		})
	}
}
