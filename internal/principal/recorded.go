package principal

import "strings"

// Recorded is the principal a stored job was started for, rebuilt from
// what the store kept of it (Name, Groups and Client as they were, and
// its ID) when the job runs again after a restart with no request behind
// it: for the records of that run alone. No face decided it; it is
// never the operator, and no policy is built for it.
func Recorded(id, name string, groups []string, client string) Principal {
	return Principal{id: id, name: name, groups: strings.Join(groups, "\x00"), client: client, recorded: true}
}

// IsRecorded reports whether p was rebuilt by Recorded.
func (p Principal) IsRecorded() bool { return p.recorded }
