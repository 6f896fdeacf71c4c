package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"mcpx/internal/config"
	"mcpx/internal/hostconfig"
)

// What import, install, uninstall and doctor share: finding a host and
// its file, reading and writing files whole, and merging servers into
// mcpx's config.

// lookupHost returns the host named name, or a usage error listing them.
func lookupHost(name string) (*hostconfig.Host, error) {
	if h := hostconfig.Lookup(name); h != nil {
		return h, nil
	}
	return nil, usagef("unknown host %q (want one of %s)", name, hostconfig.Names())
}

// oneHost returns the host args name, or a usage error unless args is
// one name of a host.
func oneHost(args []string) (*hostconfig.Host, error) {
	if len(args) != 1 {
		return nil, usagef("want one HOST")
	}
	return lookupHost(args[0])
}

func hostEnv(env *Env) hostconfig.Env {
	return hostconfig.Env{Getenv: env.getenv, GOOS: runtime.GOOS}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// hostFile returns the file to read or edit: path if given, else the
// host's user-wide file.
func hostFile(env *Env, h *hostconfig.Host, path string) (string, error) {
	if path != "" {
		return filepath.Abs(path)
	}
	return h.File(hostEnv(env), exists)
}

// maxConfigFile bounds the config files mcpx reads whole: a host's or
// its own (Claude Code's ~/.claude.json, which keeps history, is the
// largest seen: a few MB).
const maxConfigFile = 64 << 20

// readMaybe reads a config file; a missing one is empty and not existed.
// Anything but a regular file of at most maxConfigFile bytes is an error,
// so that a FILE argument of /dev/zero or a FIFO does not hang or fill
// memory.
func readMaybe(path string) (data []byte, existed bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxConfigFile {
		return nil, false, fmt.Errorf("%s is %d bytes, more than a config file may be (%d)", path, fi.Size(), maxConfigFile)
	}
	data, err = io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err == nil && len(data) > maxConfigFile {
		err = fmt.Errorf("%s grew past %d bytes while being read", path, maxConfigFile)
	}
	return data, err == nil, err
}

// writeFile replaces path's contents with data all at once (a temporary
// file renamed over it), keeping its mode, else using mode. A path that
// is a symbolic link (a config kept with the user's dotfiles) stays one:
// the file it leads to is the one replaced.
func writeFile(path string, data []byte, mode fs.FileMode) error {
	path, err := followLinks(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".mcpx-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// maxLinks bounds the symbolic links followLinks follows, as the kernel
// does (ELOOP).
const maxLinks = 40

// followLinks returns the file path leads to through symbolic links; the
// last one may lead to nothing yet (a link to a file not yet written).
func followLinks(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("%s: more than %d symbolic links in a row", path, maxLinks)
}

// bearer matches a bearer token in a diff; compiled on first use.
var bearer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(Bearer )[A-Za-z0-9._~+/=-]{16,}`) })

// printDiff prints a diff of a host's file with bearer tokens hidden: the
// file holds them, the terminal and its scrollback need not.
func printDiff(w io.Writer, diff string) {
	fmt.Fprint(w, bearer().ReplaceAllString(diff, "${1}<hidden>"))
}

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// mcpxConfig is mcpx's config file as import and install --move edit it.
type mcpxConfig struct {
	path    string
	data    []byte
	existed bool
	sep     string
	names   map[string]bool // its servers' names
}

// readMCPXConfig reads the config file named by path, else the default
// one; a missing file is an empty config. A file that does not load is
// an error: nothing is merged into a broken config.
func readMCPXConfig(env *Env, path string) (*mcpxConfig, error) {
	if path == "" {
		paths, err := config.DefaultPaths(env.getenv)
		if err != nil {
			return nil, err
		}
		path = paths.DefaultConfigFile()
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	c := &mcpxConfig{path: path, sep: config.DefaultSeparator, names: map[string]bool{}}
	if c.data, c.existed, err = readMaybe(path); err != nil {
		return nil, err
	}
	if !c.existed {
		return c, nil
	}
	cfg, err := config.Parse(c.data, path, &config.LoadOptions{Lookup: anyVar})
	if err != nil {
		return nil, err
	}
	c.sep = cfg.ToolNames.Separator
	for n := range cfg.Servers {
		c.names[n] = true
	}
	return c, nil
}

// anyVar treats every ${VAR} as set: checking a file's form must not
// depend on this shell's environment.
func anyVar(string) (string, bool) { return "x", true }

// merged is the outcome of merging a host's servers into mcpx's config.
type merged struct {
	data     []byte   // the new config
	added    []string // host names of the servers taken
	replaced []string // mcpx names replaced (--force)
	kept     []string // mcpx names already there, not replaced
}

// merge adds im's servers to c: a server whose name mcpx already has is
// replaced with force, else left out and reported. The result must load
// as an mcpx config.
func (c *mcpxConfig) merge(im *hostconfig.Import, force bool) (*merged, error) {
	m := &merged{}
	var set []hostconfig.Member
	for _, e := range im.Entries {
		if e.Server == nil {
			continue
		}
		if c.names[e.Name] {
			if !force {
				m.kept = append(m.kept, e.Name)
				continue
			}
			m.replaced = append(m.replaced, e.Name)
		}
		v, err := json.Marshal(e.Server)
		if err != nil {
			return nil, err
		}
		set = append(set, hostconfig.Member{Name: e.Name, Value: v})
		m.added = append(m.added, e.From)
	}
	m.data = c.data
	if len(set) == 0 {
		return m, nil
	}
	data, err := hostconfig.AppendJSON(c.data, "mcpServers", set)
	if err != nil {
		return nil, fmt.Errorf("editing %s: %w", c.path, err)
	}
	if _, err := config.Parse(data, c.path, &config.LoadOptions{Lookup: anyVar}); err != nil {
		return nil, fmt.Errorf("the merged config would not load, so nothing was written: %w", err)
	}
	m.data = data
	return m, nil
}

// printImport reports each server of im: taken, renamed, skipped (why) or
// kept out by a server of the same name; then the variables to set.
func printImport(w io.Writer, im *hostconfig.Import, m *merged, force bool) {
	isKept := map[string]bool{}
	for _, n := range m.kept {
		isKept[n] = true
	}
	isReplaced := map[string]bool{}
	for _, n := range m.replaced {
		isReplaced[n] = true
	}
	for _, e := range im.Entries {
		where := e.From + " (" + e.Scope + ")"
		switch {
		case e.Server == nil:
			fmt.Fprintf(w, "skipped   %s: %s\n", where, e.Skipped)
		case isKept[e.Name]:
			fmt.Fprintf(w, "not taken %s: mcpx already has a server named %q (--force replaces it)\n", where, e.Name)
		case isReplaced[e.Name]:
			fmt.Fprintf(w, "replaced  %s: mcpx's server %q is now this one\n", where, e.Name)
		case e.Renamed():
			fmt.Fprintf(w, "renamed   %s as %s (mcpx names are 1 to 48 of A-Z a-z 0-9 _ -, without the separator)\n", where, e.Name)
		default:
			fmt.Fprintf(w, "took      %s\n", where)
		}
		for _, n := range e.Notes {
			fmt.Fprintf(w, "            %s\n", n)
		}
	}
	if len(im.Vars) > 0 {
		fmt.Fprintln(w, "set these in mcpx's environment (the daemon's, or the shell that starts it):")
		for _, v := range im.Vars {
			secret := ""
			if v.Secret {
				secret = ", a secret"
			}
			fmt.Fprintf(w, "  %s (for %s%s): %s\n", v.Name, strings.Join(v.Servers, ", "), secret, v.Why)
		}
	}
}
