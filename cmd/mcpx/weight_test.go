package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The weight every mcpx process pays, whatever it does: the binary's
// size and the package inits that run before main (Go runs every linked
// package's init in every process, so a CLI verb, a shim and a sandbox
// child pay for all of them). docs/benchmarks.md ("What each dependency
// costs") has the measurements and `go run ./bench/weight` the table.
//
// Each budget is the latest measurement (docs/benchmarks.md) plus a
// small margin: room for a small dependency (a few inits, tens of KB, a
// megabyte of binary), not for a heavy one.
//
// The file is what `go install ./cmd/mcpx` writes; its loadable segments
// (code, read-only data with the runtime's tables, data) are what every
// process maps, the rest (DWARF and the symbol table) is never read.
const (
	binaryBudget    = 48_000_000 // bytes of `go build ./cmd/mcpx`
	mappedBudget    = 34_500_000 // bytes of its loadable segments
	initsBudget     = 172        // packages with init work
	initHeapBudget  = 580_000    // bytes allocated by package inits
	initAllocBudget = 4_300      // allocations by package inits

	// mcpx's own packages build their tables, statements and regular
	// expressions on first use (sync.OnceValue), not at start-up: what
	// their inits may still allocate.
	ownInitHeapBudget  = 20_000
	ownInitAllocBudget = 170
)

// deniedInits are packages no mcpx process may initialise: they belong
// to features with a lighter way in (OTLP is mcpx's own protobuf over
// HTTP, the metrics page mcpx's own text), so their coming back means a
// dependency brought them.
var deniedInits = []string{
	"google.golang.org/grpc",
	"github.com/grpc-ecosystem/",
	"go.opentelemetry.io/otel/exporters/",
	"go.opentelemetry.io/proto/",
	"google.golang.org/genproto/",
	"golang.org/x/net/trace",
	"github.com/prometheus/",
	"google.golang.org/protobuf/",
}

var built = struct {
	once sync.Once
	bin  string
	err  error
}{}

// binary builds mcpx once for the tests, or returns MCPX_WEIGHT_BIN.
func binary(t *testing.T) string {
	if testing.Short() {
		t.Skip("builds mcpx")
	}
	if bin := os.Getenv("MCPX_WEIGHT_BIN"); bin != "" {
		return bin
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcpx-weight-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "mcpx")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// TestWeight holds mcpx to the budgets above, with `mcpx version` and the
// shim's verb as the start-up.
func TestWeight(t *testing.T) {
	bin := binary(t)
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > binaryBudget {
		t.Errorf("the binary is %.1f MB, over its budget of %.1f MB", float64(st.Size())/1e6, float64(binaryBudget)/1e6)
	}
	if mapped, err := mappedSize(bin); err != nil {
		t.Error(err)
	} else if mapped > mappedBudget {
		t.Errorf("the binary's loadable segments are %.1f MB, over their budget of %.1f MB", float64(mapped)/1e6, float64(mappedBudget)/1e6)
	}
	for _, verb := range [][]string{{"version"}, {"shim", "--help"}} {
		cmd := exec.Command(bin, verb...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run() // the shim's usage error exits non-zero; the inits ran before it
		inits, heap, allocs, ownHeap, ownAllocs := 0, 0, 0, 0, 0
		for line := range strings.SplitSeq(stderr.String(), "\n") {
			f := strings.Fields(line)
			if len(f) != 11 || f[0] != "init" || f[6] != "clock," {
				continue
			}
			inits++
			b, _ := strconv.Atoi(f[7])
			a, _ := strconv.Atoi(f[9])
			heap += b
			allocs += a
			if strings.HasPrefix(f[1], "mcpx/") {
				ownHeap += b
				ownAllocs += a
			}
			for _, d := range deniedInits {
				if strings.HasPrefix(f[1], d) {
					t.Errorf("mcpx %s initialises %s, which no mcpx process needs", verb[0], f[1])
				}
			}
		}
		if inits == 0 {
			t.Fatalf("mcpx %s printed no init trace:\n%s", verb[0], stderr.String())
		}
		if inits > initsBudget || heap > initHeapBudget || allocs > initAllocBudget {
			t.Errorf("mcpx %s: %d package inits allocating %d bytes in %d allocations; budgets %d, %d, %d",
				verb[0], inits, heap, allocs, initsBudget, initHeapBudget, initAllocBudget)
		}
		if ownHeap > ownInitHeapBudget || ownAllocs > ownInitAllocBudget {
			t.Errorf("mcpx %s: mcpx's own package inits allocate %d bytes in %d allocations; budgets %d, %d (build package data on first use)",
				verb[0], ownHeap, ownAllocs, ownInitHeapBudget, ownInitAllocBudget)
		}
	}
}

// mappedSize returns the bytes of the file's loadable segments: what a
// process maps of it.
func mappedSize(bin string) (int64, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return 0, fmt.Errorf("reading the binary's segments: %w", err)
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
