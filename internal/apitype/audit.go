package apitype

import "time"

// PathV1Audit is the audit log (GET, an AuditRecords), for the
// operator alone. Its query selects: principal (an ID or a name), tool,
// server, outcome, kind, since and until (RFC 3339 times, since <= time
// < until), limit (default 100).
const PathV1Audit = "/v1/audit"

// AuditRecord is one record of the audit log: who did what, where, how
// it ended, never the arguments (ArgsSHA256 stands for them).
type AuditRecord struct {
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"`
	Principal  string    `json:"principal"`
	Name       string    `json:"name,omitempty"`
	Groups     []string  `json:"groups,omitempty"`
	Host       string    `json:"host,omitempty"`
	Face       string    `json:"face,omitempty"`
	Server     string    `json:"server,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	Action     string    `json:"action,omitempty"`
	Outcome    string    `json:"outcome"`
	Detail     string    `json:"detail,omitempty"`
	DurationMS int64     `json:"durationMs,omitempty"`
	Job        string    `json:"job,omitempty"`
	Replica    string    `json:"replica,omitempty"`
	ArgsSHA256 string    `json:"argsSha256,omitempty"`
}

// AuditRecords is the reply to GET PathV1Audit, newest first.
type AuditRecords struct {
	Records []AuditRecord `json:"records"`
}

// AuditStats is the state of the audit log's writer, in Status.
type AuditStats struct {
	Written  int64 `json:"written"`
	Lost     int64 `json:"lost"`
	Failures int64 `json:"failures"`
	Queued   int64 `json:"queued"`
	// Failing: records cannot be written now (failing closed, no tool
	// call is admitted meanwhile).
	Failing bool `json:"failing,omitempty"`
}
