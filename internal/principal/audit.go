package principal

// Auditor is the audit log as the policy sees it: told of each refusal,
// and asked whether the operations it records may go ahead.
type Auditor interface {
	// Refused is told of each refusal of Decide's, of an operation on
	// t. It must not block.
	Refused(who Principal, t Target, r *Refusal)
	// Failing is why records cannot be written now, when the log fails
	// closed; nil when they can, or when it fails open.
	Failing() error
}

// WithAuditor returns p reporting its refusals to a, and refusing tool
// calls while a is failing (nil: no audit log).
func (p Policy) WithAuditor(a Auditor) Policy {
	p.audit = a
	return p
}

// Decide says whether the principal may do op on t: nil, or a *Refusal.
// It is the one decision of every face (the rules are decide's); every
// refusal is recorded in the audit log, and while the log fails closed
// (Auditor.Failing) no tool call or job start is allowed. A face filtering what it
// shows (a list of tools, of jobs) asks Allows, which records nothing.
func (p Policy) Decide(op Op, t Target) error {
	err := p.decide(op, t)
	if p.audit == nil {
		return err
	}
	if err == nil && (op == CallTool || op == StartJob) {
		if ferr := p.audit.Failing(); ferr != nil {
			err = &Refusal{Op: op, Why: "refused: the audit log cannot be written (" + ferr.Error() + "); mcpx.audit.onFailure is \"closed\""}
		}
	}
	if r, ok := err.(*Refusal); ok {
		p.audit.Refused(p.who, t, r)
	}
	return err
}

// Allows reports whether Decide would allow op on t, recording nothing:
// for filters (what a list shows), not for a request's decision.
func (p Policy) Allows(op Op, t Target) bool { return p.decide(op, t) == nil }
