package catalog

import (
	"strings"
	"testing"
)

// routeByList is how Route found the server before it looked names up:
// the longest configured name that, with the separator, starts name.
func routeByList(c *Catalog, name string) (server, tool string, ok bool) {
	best := ""
	for _, s := range c.pool.Names() {
		if strings.HasPrefix(name, s+c.naming.Separator) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" || len(name) == len(best)+len(c.naming.Separator) || len(name) == MaxNameLen {
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
