// Command weight says what each heavy dependency of mcpx costs: what it
// adds to the binary, to every process's start-up (GODEBUG=inittrace=1 of
// `mcpx version`), to the heap its package data holds and to what the
// garbage collector scans each cycle. The counts do not depend on the
// machine's load, except the milliseconds of init, a median of runs.
//
//	go run ./bench/weight              # builds ./cmd/mcpx, prints the table
//	go run ./bench/weight -mcpx BIN    # measures a given binary of this tree
//
// A dependency's share is what would leave the binary with it: the
// packages that only it links (its own and those no other package of
// mcpx imports). What several share is a line of its own.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	bin := flag.String("mcpx", "", "measure this mcpx `binary` (built from this tree) instead of building ./cmd/mcpx")
	runs := flag.Int("runs", 5, "runs of `mcpx version` whose init times are the median")
	flag.Parse()
	if err := run(*bin, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "weight:", err)
		os.Exit(1)
	}
}

func run(bin string, runs int) error {
	if bin == "" {
		dir, err := os.MkdirTemp("", "mcpx-weight-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "mcpx")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/mcpx")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building ./cmd/mcpx: %w", err)
		}
	}
	g, err := loadGraph("./cmd/mcpx")
	if err != nil {
		return err
	}
	syms, err := symbolSizes(bin)
	if err != nil {
		return err
	}
	inits, rss, err := initTrace(bin, runs)
	if err != nil {
		return err
	}
	st, err := os.Stat(bin)
	if err != nil {
		return err
	}
	mapped, err := mappedSize(bin)
	if err != nil {
		return err
	}
	writeReport(os.Stdout, g, syms, inits, rss, st.Size(), mapped)
	return nil
}
