package hostserver

import (
	"slices"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/jobs"
	"mcpx/internal/principal"
	"mcpx/internal/store"
)

func hostFilters(t *testing.T) func(host string) hostFilter {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"mcpx": {"hosts": {
		"one":     {"tools": ["demo__*"]},
		"deny":    {"tools": ["!secret__*"]},
		"tool":    {"tools": ["files__read"]},
		"reallow": {"tools": ["!files__*", "files__read"]},
		"shadow":  {"tools": ["files__read", "!files__read"]},
		"any":     {"tools": ["*__read"]},
		"none":    {"tools": ["!*"]},
		"some":    {"tools": ["files__*", "!files__delete_*"]},
		"onechar": {"tools": ["!files__?"]}
	}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return func(host string) hostFilter {
		f := cfg.HostTools(host)
		return hostFilter{pol: principal.NewPolicy(principal.Host(host), f, "__"), f: f, sep: "__"}
	}
}

// TestUsesServer: a host may use a server when its filter can allow one
// of the server's tools, judged from the patterns alone.
func TestUsesServer(t *testing.T) {
	filter := hostFilters(t)
	for _, tc := range []struct {
		host, server string
		uses         bool
	}{
		{"nobody", "secret", true}, // no filter
		{"one", "demo", true},
		{"one", "secret", false},
		{"one", "dem", false},
		{"deny", "secret", false},
		{"deny", "docs", true},
		{"tool", "files", true},
		{"tool", "demo", false},
		{"reallow", "files", true},
		{"reallow", "git", true},
		{"shadow", "files", false},
		{"any", "git", true},
		{"none", "git", false},
		{"some", "files", true},
		{"some", "shell", false},
		{"onechar", "files", true}, // its tools of longer names
	} {
		if got := filter(tc.host).usesServer(tc.server); got != tc.uses {
			t.Errorf("%s uses %s: %v, want %v", tc.host, tc.server, got, tc.uses)
		}
	}
	if filter("nobody").visible() != nil {
		t.Error("a host without a filter has a visibility function: the catalog would call it for nothing")
	}
}

func TestInstances(t *testing.T) {
	for _, tc := range []struct {
		pattern, prefix string
		want            []string
	}{
		{"demo__*", "demo__", []string{"demo__"}},
		{"demo__e?ho", "demo__", []string{"demo__exho"}},
		{"*__read", "files__", []string{"files____read", "files___read", "files__read"}},
		{"d*", "demo__", []string{"demo__"}},
		{"files__*", "demo__", nil},
		{"de", "demo__", nil},
		{"", "x__", nil},
	} {
		if got := instances(tc.pattern, tc.prefix); !slices.Equal(got, tc.want) {
			t.Errorf("instances(%q, %q) = %q, want %q", tc.pattern, tc.prefix, got, tc.want)
		}
	}
}

// TestReadsJob: a filtered host sees a job while its filter allows the
// job's tool; a script's job only if the script ran under its filter.
func TestReadsJob(t *testing.T) {
	filter := hostFilters(t)
	one, deny, nobody := filter("one"), filter("deny"), filter("nobody")
	// Jobs of the hosts' principal (stream hosts: the local user's).
	local := principal.LocalID
	echo := &store.Job{Principal: local, Server: "demo", Tool: "echo"}
	secret := &store.Job{Principal: local, Server: "secret", Tool: "echo"}
	cliScript := &store.Job{Principal: local, Tool: scriptJobTool}
	oneScript := &store.Job{Principal: local, Tool: scriptJobTool, Params: one.scriptJobParams()}
	othersEcho := &store.Job{Principal: principal.HTTPID, Server: "demo", Tool: "echo"}
	for _, tc := range []struct {
		name   string
		filter hostFilter
		job    *store.Job
		reads  bool
	}{
		{"one reads demo's", one, echo, true},
		{"one reads secret's", one, secret, false},
		{"deny reads secret's", deny, secret, false},
		{"nobody reads secret's", nobody, secret, true},
		{"one reads the CLI's script", one, cliScript, false},
		{"one reads its own script", one, oneScript, true},
		{"deny reads one's script", deny, oneScript, false},
		{"nobody reads one's script", nobody, oneScript, true},
		{"nobody reads the CLI's script", nobody, cliScript, true},
		{"one reads another principal's demo job", one, othersEcho, false},
		{"nobody reads another principal's demo job", nobody, othersEcho, false},
	} {
		for _, op := range []principal.Op{principal.ReadJob, principal.CancelJob} {
			if got := tc.filter.pol.Decide(op, jobs.Target(tc.job)) == nil; got != tc.reads {
				t.Errorf("%s (%v): %v, want %v", tc.name, op, got, tc.reads)
			}
		}
	}
	if nobody.scriptJobParams() != nil {
		t.Error("a script of a host without a filter keeps params")
	}
}

// BenchmarkUsesServer: what deciding one server costs a filtered host's
// list or read, for a filter of a few patterns.
func BenchmarkUsesServer(b *testing.B) {
	cfg, err := config.Parse([]byte(`{"mcpx": {"hosts": {"h": {"tools": ["!*", "files__read", "demo__*", "!demo__delete_*"]}}}}`), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	f := hostFilter{f: cfg.HostTools("h"), sep: "__"}
	for b.Loop() {
		f.usesServer("secret")
	}
}
