package supervise

import "testing"

// FuzzParseStat: /proc/<pid>/stat names the command in parentheses, as
// the process chose it: spaces, parentheses and newlines included. The
// fields after it are read right whatever the name.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("sleep"), []byte("S 1 2 3 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100"))
	f.Add([]byte("a) R 9 9 9 (b"), []byte("Z 4 5 6 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0"))
	f.Add([]byte(""), []byte("S 1"))
	f.Fuzz(func(t *testing.T, comm, rest []byte) {
		line := append(append(append([]byte("42 ("), comm...), ") "...), rest...)
		p, err := parseStat(42, line)
		if err != nil {
			return
		}
		if p.pid != 42 {
			t.Fatalf("pid %d", p.pid)
		}
		// Parsed right: the same fields as a stat line whose name is plain.
		plain, err := parseStat(42, append([]byte("42 (x) "), rest...))
		if err != nil || plain != p {
			t.Fatalf("command %q: parsed %+v; with a plain name %+v, %v", comm, p, plain, err)
		}
	})
}
