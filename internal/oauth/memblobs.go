package oauth

import (
	"context"
	"strings"
	"sync"
	"time"
)

// MemBlobs are [Blobs] in this process's memory: the pending sign-ins of
// a gateway that shares no store. With a TTL, a value written longer ago
// than that is dropped as the next one is written, so that sign-ins
// nobody completes do not pile up.
type MemBlobs struct {
	TTL time.Duration // 0: values stay until deleted

	mu    sync.Mutex // UpdateBlob holds it through fn
	blobs map[string][]byte
	at    map[string]time.Time
}

var _ Blobs = (*MemBlobs)(nil)

// Blob implements [Blobs].
func (m *MemBlobs) Blob(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.blobs[name], nil
}

// PutBlob implements [Blobs].
func (m *MemBlobs) PutBlob(_ context.Context, name string, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(name, v)
	return nil
}

func (m *MemBlobs) putLocked(name string, v []byte) {
	if m.blobs == nil {
		m.blobs, m.at = map[string][]byte{}, map[string]time.Time{}
	}
	now := time.Now()
	if m.TTL > 0 {
		for k, at := range m.at {
			if now.Sub(at) > m.TTL {
				delete(m.blobs, k)
				delete(m.at, k)
			}
		}
	}
	m.blobs[name], m.at[name] = v, now
}

// DeleteBlob implements [Blobs].
func (m *MemBlobs) DeleteBlob(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, name)
	delete(m.at, name)
	return nil
}

// UpdateBlob implements [Blobs].
func (m *MemBlobs) UpdateBlob(_ context.Context, name string, fn func([]byte) ([]byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := fn(m.blobs[name])
	if err != nil || next == nil {
		return err
	}
	m.putLocked(name, next)
	return nil
}

// BlobNames implements [Blobs].
func (m *MemBlobs) BlobNames(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.blobs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}
