package principal

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"mcpx/internal/config"
)

// The IDs are the owners of rows already in job stores: they must not
// change.
func TestIDsKeepTheStoredOwners(t *testing.T) {
	for _, tc := range []struct {
		p    Principal
		want string
	}{
		{LocalUser(), "local"},
		{Host("claude-code"), "local"},
		{DefaultToken(), "http"},
		{SocketHost(), "socket"},
	} {
		if tc.p.ID() != tc.want {
			t.Errorf("%v: ID %q, want %q", tc.p, tc.p.ID(), tc.want)
		}
	}
	a := NamedToken("alice", "tok-1")
	if !regexp.MustCompile(`^http:alice#[0-9a-f]{8}$`).MatchString(a.ID()) || a.Token() != "alice" {
		t.Errorf("named token: ID %q, token %q", a.ID(), a.Token())
	}
	if again := NamedToken("alice", "tok-2"); again.ID() == a.ID() {
		t.Errorf("a name minted again is the same principal: %q", a.ID())
	}
	if NamedToken("alice", "tok-1") != a {
		t.Error("the same token is not the same principal (replicas must agree)")
	}
	if !LocalUser().Operator() || Host("x").Operator() || DefaultToken().Operator() || a.Operator() || SocketHost().Operator() {
		t.Error("only the local user on the socket is the operator")
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if !From(ctx).IsZero() {
		t.Error("a context no face filled carries a principal")
	}
	a := NamedToken("alice", "t").WithClient("cursor")
	if got := From(NewContext(ctx, a)); got != a || got.Client() != "cursor" {
		t.Errorf("From = %+v, want %+v", got, a)
	}
}

// demoOnly is a host filter that allows the demo server's tools alone.
func demoOnly(t *testing.T) *config.ToolFilter {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"mcpx":{"hosts":{"alice":{"tools":["demo__*"]}}},"mcpServers":{}}`), "/x/mcpx.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.HostTools("alice")
	if f == nil {
		t.Fatal("no filter for alice")
	}
	return f
}

// TestDecide walks every operation for every kind of principal.
func TestDecide(t *testing.T) {
	const ok, hidden, forbidden = "ok", "hidden", "forbidden"
	alice := NamedToken("alice", "a")
	bob := NamedToken("bob", "b")
	pols := map[string]Policy{
		"local user":  NewPolicy(LocalUser(), nil, "__"),
		"stdio host":  NewPolicy(Host("h"), nil, "__"),
		"filtered":    NewPolicy(Host("h"), demoOnly(t), "__"),
		"default":     NewPolicy(DefaultToken(), nil, "__"),
		"alice":       NewPolicy(alice, demoOnly(t), "__"),
		"bob":         NewPolicy(bob, nil, "__"),
		"nobody":      NewPolicy(Principal{}, nil, "__"),
		"socket host": NewPolicy(SocketHost(), nil, "__"),
	}
	demo := Target{Server: "demo", Tool: "echo"}
	secret := Target{Server: "secret", Tool: "echo"}
	job := func(owner string, tool Target) Target {
		tool.ID, tool.Owner = "j1", owner
		return tool
	}
	type row struct {
		op   Op
		t    Target
		want map[string]string // by policy; "nobody" is always forbidden
	}
	all := func(v string) map[string]string {
		m := map[string]string{}
		for k := range pols {
			m[k] = v
		}
		return m
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	rows := []row{
		{CallTool, demo, all(ok)},
		{CallTool, secret, with(all(ok), "filtered", forbidden, "alice", forbidden)},
		{CallTool, Target{Tool: "mcpx_exec"}, all(ok)},
		{ReadJob, job("local", demo), with(all(hidden), "local user", ok, "stdio host", ok, "filtered", ok)},
		{ReadJob, job("local", secret), with(all(hidden), "local user", ok, "stdio host", ok, "filtered", forbidden)},
		{ReadJob, job(alice.ID(), demo), with(all(hidden), "local user", ok, "alice", ok)},
		{ReadJob, job(alice.ID(), secret), with(all(hidden), "local user", ok, "alice", forbidden)},
		{CancelJob, job(bob.ID(), demo), with(all(hidden), "local user", ok, "bob", ok)},
		{CancelJob, job("http", demo), with(all(hidden), "local user", ok, "default", ok)},
		{ReadJob, job("socket", Target{Tool: "mcpx_exec"}), with(all(hidden), "local user", ok, "socket host", ok)},
		// A script's job: its tools are not kept, so a filtered reader
		// sees it only if it ran under the reader's filter.
		{ReadJob, job("local", Target{Tool: "mcpx_exec"}), with(all(hidden), "local user", ok, "stdio host", ok, "filtered", forbidden)},
		{CancelJob, job("local", Target{Tool: "mcpx_exec", Filter: demoOnly(t).Path}), with(all(hidden), "local user", ok, "stdio host", ok, "filtered", ok)},
		{ReadJob, job(alice.ID(), Target{Tool: "mcpx_exec", Filter: "mcpx.hosts.other.tools"}), with(all(hidden), "local user", ok, "alice", forbidden)},
		{ReadCall, Target{Owner: bob.ID()}, with(all(hidden), "local user", ok, "bob", ok)},
		{CancelCall, Target{Owner: "local"}, with(all(hidden), "local user", ok, "stdio host", ok, "filtered", ok)},
		{CancelCall, Target{Owner: ""}, with(all(hidden), "local user", ok)},
		{ReadStatus, Target{}, with(all(forbidden), "local user", ok)},
		{Operate, Target{}, with(all(forbidden), "local user", ok)},
		{ReadAudit, Target{}, with(all(forbidden), "local user", ok)},
		{ReadMetrics, Target{}, with(all(forbidden), "local user", ok, "default", ok)},
		{StartJob, demo, all(ok)},
		{StartJob, secret, with(all(ok), "filtered", forbidden, "alice", forbidden)},
		{StartJob, Target{Tool: "mcpx_exec"}, all(ok)},
		// A sign-in is completed by its own principal alone, the operator
		// included; revoked by its principal or the operator.
		{SignIn, Target{Owner: alice.ID(), Server: "gh"}, with(all(forbidden), "alice", ok)},
		{SignIn, Target{Owner: "local", Server: "gh"}, with(all(forbidden), "local user", ok, "stdio host", ok, "filtered", ok)},
		{SignIn, Target{Owner: "", Server: "gh"}, all(forbidden)},
		{RevokeSignIn, Target{Owner: alice.ID(), Server: "gh"}, with(all(hidden), "local user", ok, "alice", ok)},
		{RevokeSignIn, Target{Owner: bob.ID(), Server: "gh"}, with(all(hidden), "local user", ok, "bob", ok)},
		{RevokeSignIn, Target{Owner: "", Server: "gh"}, all(hidden)},
	}
	seen := map[Op]bool{}
	for _, r := range rows {
		seen[r.op] = true
		for name, pol := range pols {
			want := r.want[name]
			if name == "nobody" {
				want = forbidden
			}
			err := pol.Decide(r.op, r.t)
			got := ok
			var ref *Refusal
			switch {
			case err == nil:
			case !errors.As(err, &ref) || ref.Why == "" || ref.Op != r.op:
				t.Fatalf("%s: %v %+v: error %v is no *Refusal of its op", name, r.op, r.t, err)
			case ref.Hidden:
				got = hidden
			default:
				got = forbidden
			}
			if got != want {
				t.Errorf("%s: %v %+v: %s (%v), want %s", name, r.op, r.t, got, err, want)
			}
		}
	}
	for _, op := range Ops() {
		if !seen[op] {
			t.Errorf("operation %v has no row", op)
		}
	}
	if err := NewPolicy(LocalUser(), nil, "__").Decide(Op(99), Target{}); err == nil {
		t.Error("an unknown operation was allowed")
	}
}

// The refusals say why, in the words hosts already see over MCP; a
// hidden one says no more than that the id is unknown.
func TestRefusalMessages(t *testing.T) {
	pol := NewPolicy(NamedToken("alice", "a"), demoOnly(t), "__")
	err := pol.Decide(CallTool, Target{Name: "secret__echo", Server: "secret", Tool: "echo"})
	if want := `tool "secret__echo" is not allowed for this host: no rule of mcpx.hosts.alice.tools allows it`; err == nil || err.Error() != want {
		t.Errorf("call: %v, want %q", err, want)
	}
	err = pol.Decide(ReadJob, Target{ID: "j9", Owner: "local", Server: "demo", Tool: "echo"})
	if want := `job "j9": no job has this id`; err == nil || err.Error() != want || strings.Contains(err.Error(), "local") {
		t.Errorf("another's job: %v, want %q", err, want)
	}
	err = pol.Decide(CancelCall, Target{ID: "7", Owner: "local"})
	if err == nil || err.Error() != "no such call in flight" {
		t.Errorf("another's call: %v", err)
	}
}
