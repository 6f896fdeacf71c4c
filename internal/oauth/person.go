package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Per-person sign-ins. A server configured with per-person accounts has a
// record per principal that signed in to it, apart from the server's
// shared one (mcpx login's): every method of [Records] takes the
// record's key, which is the server's name for the shared record and
// PersonKey(server, principal) for a principal's. A record's key is
// derived from its Server and Principal fields ([Record.Key]), so a
// record is saved where it is loaded from.

// personSep separates a server's name from the digest of a principal's
// ID in a key; a server name never holds it (config.checkName).
const personSep = "~"

// PersonKey is the key of principal's record of server: the server's
// name and a digest of the principal's ID, which is safe in a file name
// and a blob name whatever the ID holds (an identity provider's subject).
func PersonKey(server, principal string) string {
	if principal == "" {
		return server
	}
	sum := sha256.Sum256([]byte(principal))
	return server + personSep + hex.EncodeToString(sum[:16])
}

// Key is where r is kept: its server's shared record, or its principal's.
func (r *Record) Key() string { return PersonKey(r.Server, r.Principal) }

// personPrefix is the start of every per-person key of server.
func personPrefix(server string) string { return server + personSep }

// isPersonKey reports whether key is a per-person key of server.
func isPersonKey(server, key string) bool {
	return strings.HasPrefix(key, personPrefix(server)) && len(key) == len(personPrefix(server))+32
}

// Lister is what records that can enumerate the per-person sign-ins of
// a server have ([Store] and [Sealed] do): the background refresh keeps
// each of them fresh, not only the ones this process used.
type Lister interface {
	// PersonKeys returns the keys of server's per-person records.
	PersonKeys(ctx context.Context, server string) ([]string, error)
}
