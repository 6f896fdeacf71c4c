package sock

import (
	"fmt"
	"net"
	"os"
)

// CheckPeer returns nil when the process at the other end of c runs as the
// same user as this process, or as root, and an error otherwise, including
// when the peer's user cannot be read.
func CheckPeer(c net.Conn) error {
	uid, err := PeerUID(c)
	if err != nil {
		return fmt.Errorf("check peer: %w", err)
	}
	return checkUID(uid, os.Getuid())
}

// checkUID is CheckPeer's rule: a peer may be this process's user or root.
func checkUID(peer, self int) error {
	if peer == self || peer == 0 {
		return nil
	}
	return fmt.Errorf("check peer: uid %d is neither uid %d nor root", peer, self)
}
