package mcpxtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// toolBinary is a program of the test/tools module (pinned there), built
// once per test process into a temporary directory.
type toolBinary struct {
	pkg, name, what string

	once sync.Once
	bin  string
	err  error
}

// path returns the built program, building it on first use; a failed
// build fails the test.
func (b *toolBinary) path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcpx-"+b.name+"-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, b.name)
		cmd := exec.Command("go", "build", "-o", b.bin, b.pkg)
		cmd.Dir = filepath.Join(moduleRoot(), "test", "tools")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %v\n%s", b.what, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}
