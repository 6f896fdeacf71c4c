package catalog

import (
	"strings"
	"testing"
)

// routeByList is Route by scanning the list of servers: the one
// configured name that, with the separator, starts name; none when two do
// (the listing decides those).
func routeByList(c *Catalog, name string) (server, tool string, ok bool) {
	best, n := "", 0
	for _, s := range c.pool.Names() {
		if strings.HasPrefix(name, s+c.naming.Separator) {
			best, n = s, n+1
		}
	}
	if n != 1 || len(name) == len(best)+len(c.naming.Separator) || len(name) == MaxNameLen {
		return "", "", false
	}
	return best, name[len(best)+len(c.naming.Separator):], true
}

// FuzzRoute: looking candidate prefixes up routes every name as scanning
// the list of servers did, whatever the separator and the server names.
func FuzzRoute(f *testing.F) {
	f.Add("a___x", "__")
	f.Add("git__log__all", "__")
	f.Add("a_b__c", "_")
	f.Add("x..y", ".")
	f.Fuzz(func(t *testing.T, name, sep string) {
		if sep == "" {
			return // the config refuses an empty separator
		}
		c := newCatalog(t, Naming{Prefix: "always", Separator: sep}, "git", "gitlab", "a", "a_", "a__", "files", "x.", "a_b")
		s1, t1, ok1 := c.Route(name)
		s2, t2, ok2 := routeByList(c, name)
		if s1 != s2 || t1 != t2 || ok1 != ok2 {
			t.Fatalf("Route(%q, sep %q) = %q, %q, %v; by the list: %q, %q, %v", name, sep, s1, t1, ok1, s2, t2, ok2)
		}
	})
}
