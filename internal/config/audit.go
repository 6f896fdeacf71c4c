package config

import "time"

// Audit is the audit log (the file's mcpx.audit block): where each
// record goes, and what happens when one cannot be written. Its zero
// value (no block) records nothing.
type Audit struct {
	// Enabled: the block is there.
	Enabled bool
	// File is the JSON-lines file records are appended to, "-" for the
	// daemon's standard output, "" for none.
	File string
	// Store: records also go to the audit table of the job store (the
	// SQLite file, or the PostgreSQL store replicas share). Default true.
	Store bool
	// FailOpen: a record that cannot be written is counted, logged and
	// dropped, and operations go on. The default (false) fails closed:
	// while records cannot be written, no new tool call is admitted.
	FailOpen bool
	// Queue is how many records may wait for the writer (0: 4096).
	Queue int
	// MaxAge and MaxRows bound the store's table (0: no bound by that
	// measure); older or surplus rows are pruned.
	MaxAge  time.Duration
	MaxRows int
}

const maxAuditQueue = 1 << 20

func (p *parser) audit(n *node, at path, a *Audit) error {
	f, err := p.object(n, at, []string{"file", "store", "onFailure", "queue", "maxAge", "maxRows"})
	if err != nil {
		return err
	}
	*a = Audit{Enabled: true, Store: true}
	if v, ok := f["file"]; ok {
		if a.File, err = p.expanded(v, at.key("file")); err != nil {
			return err
		}
	}
	if v, ok := f["store"]; ok {
		if a.Store, err = p.boolean(v, at.key("store")); err != nil {
			return err
		}
	}
	if v, ok := f["onFailure"]; ok {
		s, err := p.str(v, at.key("onFailure"))
		if err != nil {
			return err
		}
		switch s {
		case "closed":
		case "open":
			a.FailOpen = true
		default:
			return p.errorf(v.off, at.key("onFailure"), `must be "closed" (refuse new tool calls while records cannot be written) or "open" (count, log and drop them)`)
		}
	}
	if v, ok := f["queue"]; ok {
		if a.Queue, err = p.integer(v, at.key("queue"), 1, maxAuditQueue); err != nil {
			return err
		}
	}
	if v, ok := f["maxAge"]; ok {
		if a.MaxAge, err = p.duration(v, at.key("maxAge")); err != nil {
			return err
		}
	}
	if v, ok := f["maxRows"]; ok {
		if a.MaxRows, err = p.integer(v, at.key("maxRows"), 0, 1<<40); err != nil {
			return err
		}
	}
	if !a.Store && a.File == "" {
		return p.errorf(n.off, at, `names no place for the records: set "file" (a path, or "-" for standard output), or leave "store" true`)
	}
	return nil
}
