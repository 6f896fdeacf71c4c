package jobs

import (
	"context"
	"strings"

	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// watchCancels, for a store that tells of cancels, ends the call of each
// job of this manager's that any gateway cancels, with the cause the
// cancel wrote, until stop is called.
func (m *Manager) watchCancels(ctx context.Context) (stop func()) {
	w, ok := m.st.(store.CancelWatcher)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.WatchCancels(ctx, m.cancelled); err != nil {
			m.log.Warn("watching job cancels", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// cancelled ends job id's call if it runs here; why is what the cancel
// wrote ("job cancelled with mcpx_job_cancel").
func (m *Manager) cancelled(id, why string) {
	m.mu.Lock()
	c := m.byID[id]
	m.mu.Unlock()
	if c == nil {
		return
	}
	detail := strings.TrimPrefix(why, (&relay.Cause{Kind: relay.JobCancelled}).Error())
	detail = strings.TrimPrefix(detail, " with ")
	c.cancel(&relay.Cause{Kind: relay.JobCancelled, Detail: detail})
}
