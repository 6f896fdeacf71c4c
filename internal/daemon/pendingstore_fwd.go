package daemon

import (
	"context"
	"time"

	"mcpx/internal/store"
)

// What a pendingStore is: the job store, the cluster's heartbeats, the
// store's clock and its cancels, as the PostgreSQL store is.
var (
	_ store.Store         = (*pendingStore)(nil)
	_ store.Replicas      = (*pendingStore)(nil)
	_ store.Clock         = (*pendingStore)(nil)
	_ store.CancelWatcher = (*pendingStore)(nil)
)

func (p *pendingStore) Create(ctx context.Context, j *store.Job, term time.Duration) error {
	st, err := p.get()
	if err != nil {
		return err
	}
	return st.Create(ctx, j, term)
}

func (p *pendingStore) Get(ctx context.Context, principal, id string) (*store.Job, error) {
	st, err := p.get()
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, principal, id)
}

func (p *pendingStore) List(ctx context.Context, principal string, limit int) ([]*store.Job, error) {
	st, err := p.get()
	if err != nil {
		return nil, err
	}
	return st.List(ctx, principal, limit)
}

func (p *pendingStore) FindRunning(ctx context.Context, principal, key string) (*store.Job, error) {
	st, err := p.get()
	if err != nil {
		return nil, err
	}
	return st.FindRunning(ctx, principal, key)
}

func (p *pendingStore) SetProgress(ctx context.Context, id string, l store.Lease, progress []byte) (bool, error) {
	st, err := p.get()
	if err != nil {
		return false, err
	}
	return st.SetProgress(ctx, id, l, progress)
}

func (p *pendingStore) Finish(ctx context.Context, id string, l store.Lease, to store.Status, result []byte, errText string) (bool, error) {
	st, err := p.get()
	if err != nil {
		return false, err
	}
	return st.Finish(ctx, id, l, to, result, errText)
}

func (p *pendingStore) KeepLate(ctx context.Context, id string, l store.Lease, to store.Status, result []byte, errText, note string) (bool, error) {
	st, err := p.get()
	if err != nil {
		return false, err
	}
	return st.KeepLate(ctx, id, l, to, result, errText, note)
}

func (p *pendingStore) Cancel(ctx context.Context, id, why string) (bool, error) {
	st, err := p.get()
	if err != nil {
		return false, err
	}
	return st.Cancel(ctx, id, why)
}

func (p *pendingStore) Release(ctx context.Context, owner string) error {
	st, err := p.get()
	if err != nil {
		return err
	}
	return st.Release(ctx, owner)
}

func (p *pendingStore) Renew(ctx context.Context, owner string, ids []string, term time.Duration) ([]string, error) {
	st, err := p.get()
	if err != nil {
		return nil, err
	}
	return st.Renew(ctx, owner, ids, term)
}

func (p *pendingStore) Orphans(ctx context.Context, lapsedFor time.Duration) ([]*store.Job, error) {
	st, err := p.get()
	if err != nil {
		return nil, err
	}
	return st.Orphans(ctx, lapsedFor)
}

func (p *pendingStore) Claim(ctx context.Context, id string, prev store.Lease, self string, term, lapsedFor time.Duration, note string) (bool, error) {
	st, err := p.get()
	if err != nil {
		return false, err
	}
	return st.Claim(ctx, id, prev, self, term, lapsedFor, note)
}

func (p *pendingStore) Expire(ctx context.Context, keep, forget time.Duration) (int, error) {
	st, err := p.get()
	if err != nil {
		return 0, err
	}
	return st.Expire(ctx, keep, forget)
}

func (p *pendingStore) Beat(ctx context.Context, r store.Replica, forgetAfter time.Duration) error {
	st, err := p.get()
	if err != nil {
		return err
	}
	return st.Beat(ctx, r, forgetAfter)
}

func (p *pendingStore) Leave(ctx context.Context, owner string) error {
	st, err := p.get()
	if err != nil {
		return err
	}
	return st.Leave(ctx, owner)
}

func (p *pendingStore) Replicas(ctx context.Context) ([]store.Replica, error) {
	st, err := p.get()
	if err != nil {
		return nil, err
	}
	return st.Replicas(ctx)
}

func (p *pendingStore) Now(ctx context.Context) (time.Time, error) {
	st, err := p.get()
	if err != nil {
		return time.Time{}, err
	}
	return st.Now(ctx)
}

// WatchCancels waits for the store to open, then watches its cancels:
// none can be made through it before.
func (p *pendingStore) WatchCancels(ctx context.Context, fn func(id, why string)) error {
	select {
	case <-ctx.Done():
		return nil
	case <-p.ready:
		return p.st.WatchCancels(ctx, fn)
	case <-p.done: // opened, or it gave up
		if st, err := p.get(); err == nil {
			return st.WatchCancels(ctx, fn)
		}
		return nil
	}
}
