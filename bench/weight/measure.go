package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// size is what a package's symbols take in the binary, by section.
type size struct {
	code    int64 // .text
	rodata  int64 // .rodata and the other read-only sections
	noptr   int64 // .noptrdata: in the file, never scanned by the GC
	globals int64 // .data and .bss: scanned by the GC each cycle
}

func (s *size) add(o size) {
	s.code += o.code
	s.rodata += o.rodata
	s.noptr += o.noptr
	s.globals += o.globals
}

// mappedSize returns the bytes of the binary's loadable segments: what a
// process maps of the file.
func mappedSize(bin string) (int64, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			n += int64(p.Filesz)
		}
	}
	return n, nil
}

// symbolSizes sums the sizes of the binary's symbols by package; what no
// package owns (the runtime's tables, strings) is under "". Pointer-free
// zeroed data (.noptrbss) takes neither file nor memory until touched, so
// it is left out.
func symbolSizes(bin string) (map[string]size, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("reading the symbols of %s: %w", bin, err)
	}
	sizes := map[string]size{}
	for _, sym := range syms {
		if sym.Section == elf.SHN_UNDEF || int(sym.Section) >= len(f.Sections) {
			continue
		}
		n := int64(sym.Size)
		var s size
		switch f.Sections[sym.Section].Name {
		case ".text":
			s.code = n
		case ".noptrdata":
			s.noptr = n
		case ".data", ".bss":
			s.globals = n
		case ".noptrbss", ".tbss":
			continue
		default:
			s.rodata = n
		}
		pkg := symbolPackage(sym.Name)
		v := sizes[pkg]
		v.add(s)
		sizes[pkg] = v
	}
	return sizes, nil
}

// symbolPackage returns the import path of the package a symbol belongs
// to: the path up to the first dot after its last slash.
func symbolPackage(name string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:", "go:itab.", "*"} {
		name = strings.TrimPrefix(name, p)
	}
	if i := strings.IndexAny(name, "[("); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	return strings.ReplaceAll(name[:slash+1+dot], "%2e", ".")
}

// pkgInit is one package's line of GODEBUG=inittrace=1.
type pkgInit struct {
	ms            float64 // median over the runs
	bytes, allocs int64
}

// initTrace runs `mcpx version` runs times with GODEBUG=inittrace=1 and
// returns each initialised package's work, and the peak RSS (KiB, median).
func initTrace(bin string, runs int) (map[string]pkgInit, int64, error) {
	clocks := map[string][]float64{}
	inits := map[string]pkgInit{}
	var rss []int64
	for range max(runs, 1) {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, 0, fmt.Errorf("mcpx version: %w: %s", err, stderr.String())
		}
		rss = append(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
		for pkg, in := range parseInitTrace(stderr.String()) {
			clocks[pkg] = append(clocks[pkg], in.ms)
			inits[pkg] = in
		}
	}
	for pkg, c := range clocks {
		in := inits[pkg]
		in.ms = median(c)
		inits[pkg] = in
	}
	return inits, median(rss), nil
}

// parseInitTrace reads lines such as
// "init mcpx/internal/x @1.2 ms, 0.011 ms clock, 480 bytes, 6 allocs".
func parseInitTrace(s string) map[string]pkgInit {
	r := map[string]pkgInit{}
	for line := range strings.SplitSeq(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, _ := strconv.ParseFloat(f[4], 64)
		b, _ := strconv.ParseInt(f[7], 10, 64)
		a, _ := strconv.ParseInt(f[9], 10, 64)
		r[strings.ReplaceAll(f[1], "%2e", ".")] = pkgInit{ms: ms, bytes: b, allocs: a}
	}
	return r
}

func median[T int64 | float64](v []T) T {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
