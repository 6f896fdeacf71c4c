package mcpxtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// Main runs the tests of a package that uses Binary, and removes the build
// afterwards. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// BinaryEnv names an mcpx binary already built from this module (with
// -race when the tests run with it) that Binary returns instead of
// building one: scripts/test builds it once for every end-to-end package.
const BinaryEnv = "MCPX_TEST_BINARY"

// Binary returns the path of an mcpx binary built from this module, with
// the race detector when the tests have it.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv(BinaryEnv); p != "" {
			if _, buildErr = os.Stat(p); buildErr == nil {
				buildPath = p
			}
			return
		}
		buildDir, buildErr = os.MkdirTemp("", "mcpx-bin-")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "mcpx")
		args := []string{"build", "-o", buildPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "mcpx/cmd/mcpx")
		cmd := exec.Command(goTool(), args...)
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building mcpx: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// goTool finds the go command: the one running the tests sets GOROOT in
// their environment; else PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// moduleRoot finds the directory holding go.mod, from this file's package
// directory (tests run in their package's directory).
func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.mod")) {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// ModuleRoot returns the module's root directory.
func ModuleRoot() string { return moduleRoot() }

// RaceEnabled reports whether the tests (and the mcpx they build) run
// under the race detector, whose timings say nothing of mcpx's own.
func RaceEnabled() bool { return raceEnabled }
