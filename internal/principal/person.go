package principal

// Name is p's readable name, for the audit log and messages: its ID
// until principals carry a name of their own.
func (p Principal) Name() string { return p.id }

// Groups are the groups p belongs to: none until principals carry
// them.
func (p Principal) Groups() []string { return nil }
