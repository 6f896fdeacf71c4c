package main

import (
	"fmt"
	"io"
	"strings"
)

// row is what a set of packages costs.
type row struct {
	name     string
	pkgs     int
	size     size
	inits    int
	initMS   float64
	initHeap int64
	allocs   int64
}

func measureSet(name string, pkgs map[string]bool, syms map[string]size, inits map[string]pkgInit) row {
	r := row{name: name, pkgs: len(pkgs)}
	for p := range pkgs {
		r.size.add(syms[p])
		if in, ok := inits[p]; ok {
			r.inits++
			r.initMS += in.ms
			r.initHeap += in.bytes
			r.allocs += in.allocs
		}
	}
	return r
}

// rows measures each dependency, what they share, and the rest.
func rows(g *graph, syms map[string]size, inits map[string]pkgInit) []row {
	owner := func(pkg string) int {
		for i, d := range deps {
			if d.has(pkg) {
				return i
			}
		}
		return -1
	}
	var out []row
	claimed := map[string]bool{}
	for i, d := range deps {
		gone := g.only(func(p string) bool { return owner(p) == i })
		for p := range gone {
			// Another's own, or counted in an earlier row (the exporter's
			// gRPC leaves with the SDK too).
			if o := owner(p); o >= 0 && o != i || claimed[p] {
				delete(gone, p)
			}
		}
		for p := range gone {
			claimed[p] = true
		}
		out = append(out, measureSet(d.name, gone, syms, inits))
	}
	shared := g.only(func(p string) bool { return owner(p) >= 0 })
	for p := range claimed {
		delete(shared, p)
	}
	out = append(out, measureSet("shared by several of the above", shared, syms, inits))
	own, rest := map[string]bool{}, map[string]bool{}
	for p := range g.imports {
		switch {
		case claimed[p] || shared[p]:
		case p == "mcpx" || strings.HasPrefix(p, "mcpx/"):
			own[p] = true
		default:
			rest[p] = true
		}
	}
	out = append(out, measureSet("mcpx's own packages", own, syms, inits))
	out = append(out, measureSet("the standard library and the lighter modules", rest, syms, inits))
	return out
}

func kb(n int64) string { return fmt.Sprintf("%.0f KB", float64(n)/1000) }

func writeReport(w io.Writer, g *graph, syms map[string]size, inits map[string]pkgInit, rssKiB, fileSize, mapped int64) {
	rs := rows(g, syms, inits)
	var all row
	for _, r := range rs {
		all.pkgs += r.pkgs
		all.size.add(r.size)
		all.inits += r.inits
		all.initMS += r.initMS
		all.initHeap += r.initHeap
		all.allocs += r.allocs
	}
	all.name = "**all**"
	fmt.Fprintf(w, "binary %.1f MB, %.1f MB of it mapped by every process (the rest is DWARF and the symbol table; symbols %.1f MB: the rest of the mapped bytes is the runtime's tables and strings); `mcpx version`: %d inits, %.1f ms of init (median of runs, summed), %.0f KB allocated by inits, peak RSS %.1f MB\n\n",
		float64(fileSize)/1e6, float64(mapped)/1e6, float64(all.size.code+all.size.rodata+all.size.noptr+all.size.globals)/1e6, all.inits, all.initMS, float64(all.initHeap)/1000, float64(rssKiB)/1024)
	fmt.Fprintln(w, "| dependency | packages | code | read-only data | pointer-free data | globals the GC scans | inits | init ms | heap allocated by inits | allocs |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range append(rs, all) {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %d | %.2f | %s | %d |\n",
			r.name, r.pkgs, kb(r.size.code), kb(r.size.rodata), kb(r.size.noptr), kb(r.size.globals), r.inits, r.initMS, kb(r.initHeap), r.allocs)
	}
	fmt.Fprintf(w, "\ngithub.com/google/pprof/profile is linked by: %s\n", orNone(g.importers("github.com/google/pprof/profile")))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
