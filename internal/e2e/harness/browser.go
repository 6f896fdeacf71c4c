package harness

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium starts a headless Chromium (Debian's) for the test and returns
// a browser context; it skips when there is none, except on CI, which
// installs it.
func Chromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is not installed on CI (.ci/run installs Debian's chromium package)")
		}
		t.Skip("chromium not found (Debian package chromium): the live view was not tested in a browser")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	alloc, stopAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	t.Cleanup(stopAlloc)
	bctx, stopBrowser := chromedp.NewContext(alloc)
	t.Cleanup(stopBrowser)
	return bctx
}

// PollPage evaluates expr in the page until it yields true.
func PollPage(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(WaitLong)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatalf("%s: evaluating %s: %v", what, expr, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, WaitLong)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
