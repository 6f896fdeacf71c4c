package harness

import (
	"slices"
)

func (ps *ProtectedServer) SeenCount() int {
	ps.Mu.Lock()
	defer ps.Mu.Unlock()
	return len(ps.Seen)
}

// TokensSince returns the distinct tokens the server accepted after the
// first from.
func (ps *ProtectedServer) TokensSince(from int) []string {
	ps.Mu.Lock()
	defer ps.Mu.Unlock()
	var out []string
	for _, tok := range ps.Seen[from:] {
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	return out
}
