package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// DaemonFiles are where the daemon serving one config file from one build
// keeps its socket, lock and log. Two configs, or two builds, never share a
// daemon; a test or a user can run several side by side.
type DaemonFiles struct {
	Key    string // a short hash naming this daemon
	Socket string
	Lock   string
	Log    string
	// Token is the bearer token file HTTP hosts need on TCP, shared by
	// every daemon of the user (see [Paths.TokenFile] and [Token]).
	Token string
	// TokenDir holds the named host tokens, shared like Token (see
	// [Paths.TokenDir] and hosttoken.HostTokens).
	TokenDir string
	// Upstreams holds a record of each live upstream process of the
	// daemon, so that the next daemon kills what a dead one left behind.
	Upstreams string
	// Jobs is the job store, shared by every daemon of the user; JobsLock
	// is held by the one daemon that may close every other owner's
	// running jobs at its start (see jobs.Options.Exclusive).
	Jobs, JobsLock string
}

// maxSocketPath is the longest unix socket path Linux accepts.
const maxSocketPath = 107

// Daemon returns the daemon files for configFile ("" for the embedded
// default) and build (see [BuildID]). The socket lives in RuntimeDir unless
// that path would be too long for a unix socket; then under the system temp
// dir, in a directory of this user's.
func (p Paths) Daemon(configFile, build string) DaemonFiles {
	sum := sha256.Sum256([]byte(configFile + "\x00" + build))
	key := hex.EncodeToString(sum[:8])
	d := DaemonFiles{
		Key:      key,
		Socket:   filepath.Join(p.RuntimeDir, "d-"+key+".sock"),
		Lock:     filepath.Join(p.RuntimeDir, "d-"+key+".lock"),
		Log:      filepath.Join(p.StateDir, "daemon-"+key+".log"),
		Token:    p.TokenFile(),
		TokenDir: p.TokenDir(),
		// Every daemon of the user shares it: records name their owner.
		Upstreams: filepath.Join(p.StateDir, "upstreams"),
		Jobs:      filepath.Join(p.StateDir, "jobs.db"),
		JobsLock:  filepath.Join(p.StateDir, "jobs.lock"),
	}
	if len(d.Socket) > maxSocketPath {
		dir := filepath.Join(os.TempDir(), "mcpx-"+strconv.Itoa(os.Getuid()))
		d.Socket = filepath.Join(dir, "d-"+key+".sock")
		d.Lock = filepath.Join(dir, "d-"+key+".lock")
	}
	return d
}

// BuildID identifies the running executable: its path, size and
// modification time, hashed. A rebuilt binary gets a new daemon.
func BuildID() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the executable: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("finding the executable: %w", err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano()))
	return hex.EncodeToString(sum[:8]), nil
}
