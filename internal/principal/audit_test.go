package principal

import (
	"errors"
	"testing"
)

// fakeAuditor is the audit log at the policy's seam: failing or not, and
// the refusals it was told of.
type fakeAuditor struct {
	failing error
	refused []Op
}

func (a *fakeAuditor) Refused(_ Principal, _ Target, r *Refusal) { a.refused = append(a.refused, r.Op) }
func (a *fakeAuditor) Failing() error                            { return a.failing }

// While the audit log fails closed, neither a tool call nor a job start
// is allowed, to a person as to anyone; reads and cancels are, so that the
// operator can mend it; each refusal is told to the log.
func TestAuditFailingClosed(t *testing.T) {
	a := &fakeAuditor{failing: errors.New("disk full")}
	demo := Target{Server: "demo", Tool: "echo"}
	for _, who := range []Principal{LocalUser(), NamedToken("bob", "b"), Person("https://idp", "alice", "Alice", []string{"alpha"})} {
		pol := NewPolicy(who, nil, "__").WithAuditor(a)
		if who.IsPerson() {
			pol = NewPersonPolicy(who, nil, false, "__").WithAuditor(a)
		}
		for _, op := range []Op{CallTool, StartJob} {
			if err := pol.Decide(op, demo); err == nil {
				t.Errorf("%s: %v allowed while the audit log fails closed", who.ID(), op)
			}
		}
		if err := pol.Decide(ReadJob, Target{ID: "j", Owner: who.ID()}); err != nil {
			t.Errorf("%s: reading its own job refused while the audit log fails: %v", who.ID(), err)
		}
	}
	if len(a.refused) != 6 {
		t.Errorf("the log was told of %d refusals, want 6: %v", len(a.refused), a.refused)
	}
	a.failing = nil
	if err := NewPolicy(LocalUser(), nil, "__").WithAuditor(a).Decide(StartJob, demo); err != nil {
		t.Errorf("a job start once the log is written again: %v", err)
	}
}
