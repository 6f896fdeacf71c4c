package mcpxtest

import (
	"fmt"
	"slices"
	"strings"
)

// ScenarioNames returns the scenarios of the run, sorted.
func (r *ConformanceRun) ScenarioNames() []string {
	var out []string
	for name := range r.Scenarios {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Outcome says how one scenario of the run went: "pass (N checks)", or
// "FAIL" with its failing checks' ids, or "-" if it did not run.
func (r *ConformanceRun) Outcome(scenario string) string {
	checks, ok := r.Scenarios[scenario]
	if !ok {
		return "-"
	}
	var failing []string
	for _, c := range checks {
		if c.Failing() {
			failing = append(failing, strings.ToLower(c.Status[:1])+":"+c.ID)
		}
	}
	if len(failing) == 0 {
		return fmt.Sprintf("pass (%d checks)", len(checks))
	}
	return "FAIL " + strings.Join(failing, ", ")
}

// Passed reports whether a scenario ran with no failing check.
func (r *ConformanceRun) Passed(scenario string) bool {
	return strings.HasPrefix(r.Outcome(scenario), "pass")
}

// Tally counts the run's scenarios that passed and those that failed
// (before the baseline is applied).
func (r *ConformanceRun) Tally() (passed, failed int) {
	for name := range r.Scenarios {
		if r.Passed(name) {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// CompareConformance is a table of each scenario's outcome in a direct
// run (against the conformance fixture) and a run through mcpx, with the
// tallies of both.
func CompareConformance(direct, via *ConformanceRun) string {
	names := direct.ScenarioNames()
	for _, n := range via.ScenarioNames() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	dp, df := direct.Tally()
	vp, vf := via.Tally()
	fmt.Fprintf(&b, "conformance %s: %d scenarios; direct %d passed, %d failed; through mcpx %d passed, %d failed\n",
		direct.Suite.Name, len(names), dp, df, vp, vf)
	for _, n := range names {
		d, v := direct.Outcome(n), via.Outcome(n)
		mark := " "
		if direct.Passed(n) && !via.Passed(n) {
			mark = "!" // passes directly, fails through mcpx
		}
		fmt.Fprintf(&b, "%s %-46s direct: %-20s mcpx: %s\n", mark, n, d, v)
	}
	return b.String()
}
