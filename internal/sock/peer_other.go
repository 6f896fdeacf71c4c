//go:build !linux

package sock

import (
	"errors"
	"fmt"
	"net"
)

// PeerUID returns the user id of the process at the other end of c. It is
// implemented on Linux only; elsewhere it fails, and so [CheckPeer] refuses
// every peer.
func PeerUID(c net.Conn) (int, error) {
	return 0, fmt.Errorf("read peer uid: %w", errors.ErrUnsupported)
}
