package principal

import (
	"errors"
	"strings"
	"testing"

	"mcpx/internal/config"
)

func TestPerson(t *testing.T) {
	a := Person("https://idp.example.com/", "u1", "Ada", []string{"eng", "ops"})
	again := Person("https://idp.example.com/", "u1", "Ada L.", nil)
	other := Person("https://other.example.com/", "u1", "Ada", nil)
	if a.ID() != "person:https://idp.example.com/#u1" || a.ID() != again.ID() || a.ID() == other.ID() {
		t.Errorf("IDs %q %q %q: want the issuer and subject alone, and another issuer another person", a.ID(), again.ID(), other.ID())
	}
	if !a.IsPerson() || DefaultToken().IsPerson() || a.Name() != "Ada" || strings.Join(a.Groups(), ",") != "eng,ops" || again.Groups() != nil {
		t.Errorf("%v: person %v, name %q, groups %q", a, a.IsPerson(), a.Name(), a.Groups())
	}
	if n := NamedToken("ci", "tok").Name(); n != "ci" {
		t.Errorf("a named token's name: %q", n)
	}
	if a != Person("https://idp.example.com/", "u1", "Ada", []string{"eng", "ops"}) {
		t.Error("a Principal is not comparable")
	}
}

// TestPersonPolicy: groups select a person's tools, and an admin group
// makes them an operator, through Decide alone.
func TestPersonPolicy(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"mcpServers":{},"mcpx":{"auth":{"issuers":["https://i"],"audience":"https://m/mcp",
		"groups":{"a":{"tools":["demo__echo"]},"b":{"tools":["demo__sleep"]},"root":{"admin":true}}}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pol := func(groups ...string) Policy {
		who := Person("https://i", "u-"+strings.Join(groups, "-"), "", groups)
		f, admin := cfg.GroupTools(groups)
		return NewPersonPolicy(who, f, admin, "__")
	}
	call := func(p Policy, tool string) error {
		return p.Decide(CallTool, Target{Server: "demo", Tool: tool})
	}
	a, b, ab, none, root := pol("a"), pol("b"), pol("a", "b"), pol("x"), pol("root")
	for _, c := range []struct {
		p    Policy
		tool string
		ok   bool
	}{{a, "echo", true}, {a, "sleep", false}, {b, "sleep", true}, {b, "echo", false}, {ab, "echo", true}, {ab, "sleep", true}, {ab, "other", false},
		{none, "echo", false}, {root, "echo", true}} {
		if err := call(c.p, c.tool); (err == nil) != c.ok {
			t.Errorf("%v calls %s: %v, want allowed %v", c.p.Who().Groups(), c.tool, err, c.ok)
		}
	}
	bJob := Target{ID: "j1", Owner: b.Who().ID(), Server: "demo", Tool: "sleep"}
	var r *Refusal
	if err := a.Decide(ReadJob, bJob); !errors.As(err, &r) || !r.Hidden {
		t.Errorf("a reads b's job: %v, want hidden", err)
	}
	if err := b.Decide(ReadJob, bJob); err != nil {
		t.Errorf("b reads its own job: %v", err)
	}
	if err := a.Decide(ReadStatus, Target{}); err == nil {
		t.Error("a person of no admin group reads the whole status")
	}
	if err := root.Decide(ReadStatus, Target{}); err != nil || root.JobOwner() != "" {
		t.Errorf("an admin: status %v, job owner %q", err, root.JobOwner())
	}
	if err := root.Decide(CancelJob, bJob); err != nil {
		t.Errorf("an admin cancels another's job: %v", err)
	}
	if p := NewPersonPolicy(DefaultToken(), nil, true, "__"); p.Decide(ReadStatus, Target{}) == nil {
		t.Error("admin given to a principal that is not a person")
	}
}

// TestPersonJobs: a person refused background may start no job (its
// tool refused first), an admin may; WithoutJobs binds people alone.
func TestPersonJobs(t *testing.T) {
	who := Person("https://i", "u1", "", []string{"guests"})
	echo := Target{Server: "demo", Tool: "echo"}
	var r *Refusal
	if err := NewPersonPolicy(who, nil, false, "__").Decide(StartJob, echo); err != nil {
		t.Errorf("a person allowed background: %v", err)
	}
	no := NewPersonPolicy(who, nil, false, "__").WithoutJobs()
	if err := no.Decide(StartJob, echo); !errors.As(err, &r) || r.Op != StartJob || r.Hidden || !strings.Contains(r.Why, "background") {
		t.Errorf("a person refused background starts a job: %v", err)
	}
	if err := no.Decide(StartJob, Target{Tool: "mcpx_exec"}); err == nil {
		t.Error("a person refused background starts a script's job")
	}
	if err := no.Decide(CallTool, echo); err != nil {
		t.Errorf("a person refused background may not call: %v", err)
	}
	if err := NewPersonPolicy(who, nil, true, "__").WithoutJobs().Decide(StartJob, echo); err != nil {
		t.Errorf("an admin refused a job: %v", err)
	}
	if err := NewPolicy(DefaultToken(), nil, "__").WithoutJobs().Decide(StartJob, echo); err != nil {
		t.Errorf("a token's holder refused a job: %v", err)
	}
	f := &config.ToolFilter{Patterns: []string{"!*"}, Path: "p"}
	if err := NewPersonPolicy(who, f, false, "__").Decide(StartJob, echo); !errors.As(err, &r) || r.Op != StartJob || !strings.Contains(r.Why, "not allowed") {
		t.Errorf("a job of a refused tool: %v", err)
	}
}
