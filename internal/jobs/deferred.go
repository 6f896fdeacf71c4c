package jobs

import "context"

// A manager whose Options.Open is set leaves its store closed until a
// job needs it: a gateway that never makes a job (most `mcpx serve`
// processes) never opens the embedded store, nor maps its code. The
// first use that needs the store (a call becoming a job, a job read or
// cancelled) opens it, and waits while Run deals with the orphans it
// finds there, as a manager whose store is open at start does before any
// host can ask; every later use finds it open. A store that cannot be
// opened is not tried again: every use that needs it fails with why, as
// a gateway whose store failed at start keeps no jobs.

// open makes sure the store is open and its orphans dealt with before a
// use that needs it; it returns why the store cannot be used.
func (m *Manager) open(ctx context.Context) error {
	if m.opts.Open == nil {
		return nil
	}
	m.needOnce.Do(func() { close(m.needed) })
	select {
	case <-m.started:
		return m.openErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// openOnNeed waits for the first use that needs the store, then opens
// it. It reports false when ctx ended first or the store could not be
// opened: Run then has no store to use.
func (m *Manager) openOnNeed(ctx context.Context) bool {
	select {
	case <-m.needed:
	case <-ctx.Done():
		m.openErr = ErrStopped
		return false
	}
	st, exclusive, err := m.opts.Open()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.openErr = err
		return false
	}
	m.st, m.opts.Exclusive = st, exclusive
	return true
}

// Opened reports whether the manager has its store: always, unless it
// opens it on first need (Options.Open) and nothing has needed it yet.
func (m *Manager) Opened() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st != nil
}
