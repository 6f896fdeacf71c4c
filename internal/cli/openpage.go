package cli

import (
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"mcpx/internal/config"
)

// A page mcpx opens in a browser (the live view's one-time link, a
// sign-in's start) carries a secret in its URL, and a command line is
// readable by every local user (/proc/PID/cmdline). So the browser is
// never given the URL: it is given a file of the user's alone (mode 0600,
// in a directory only the user may enter) whose page sends the browser
// on to the URL.

// pageLife is how long a redirect page is kept at most: a minute, as
// long as the live view's link lives. Each page opened first removes the
// older ones, so one left by a command that could not wait for the
// browser goes with the next.
const pageLife = time.Minute

// pagesDir is where redirect pages are written: the runtime directory's
// "pages", made the user's alone.
func pagesDir(env *Env) (string, error) {
	paths, err := config.DefaultPaths(env.getenv)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(paths.RuntimeDir, "pages")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// writePage writes a redirect page to link and returns its path; it
// first removes pages older than pageLife.
func writePage(env *Env, link string) (string, error) {
	dir, err := pagesDir(env)
	if err != nil {
		return "", fmt.Errorf("making a private place for the page: %w", err)
	}
	if old, err := filepath.Glob(filepath.Join(dir, "open-*.html")); err == nil {
		for _, p := range old {
			if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > pageLife {
				_ = os.Remove(p)
			}
		}
	}
	f, err := os.CreateTemp(dir, "open-*.html") // mode 0600
	if err != nil {
		return "", err
	}
	q := html.EscapeString(link)
	_, err = fmt.Fprintf(f, `<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=%s"><title>mcpx</title></head>
<body><p><a href="%s">Continue</a></p></body></html>
`, q, q)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// openedPage is a redirect page handed to a command.
type openedPage struct {
	path string
	cmd  *exec.Cmd
}

// openPage starts argv with a redirect page to link as its last argument
// (a file: URL). The page stays until remove, or pageLife.
func openPage(env *Env, argv []string, link string) (*openedPage, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command to open the page with")
	}
	page, err := writePage(env, link)
	if err != nil {
		return nil, err
	}
	u := (&url.URL{Scheme: "file", Path: page}).String()
	cmd := exec.Command(argv[0], append(argv[1:], u)...)
	cmd.Stdout, cmd.Stderr = env.Stderr, env.Stderr
	if err := cmd.Start(); err != nil {
		_ = os.Remove(page)
		return nil, fmt.Errorf("running %s: %w", argv[0], err)
	}
	return &openedPage{path: page, cmd: cmd}, nil
}

// wait waits for the command to exit.
func (p *openedPage) wait() error { return p.cmd.Wait() }

// release lets the command run on unwaited (a browser may run long after
// mcpx exits).
func (p *openedPage) release() { _ = p.cmd.Process.Release() }

// remove removes the page.
func (p *openedPage) remove() { _ = os.Remove(p.path) }
