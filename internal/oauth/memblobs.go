package oauth

import (
	"context"
	"strings"
	"sync"
)

// MemBlobs are [Blobs] in this process's memory: the pending sign-ins of
// a gateway that shares no store.
type MemBlobs struct {
	mu    sync.Mutex // UpdateBlob holds it through fn
	blobs map[string][]byte
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
		m.blobs = map[string][]byte{}
	}
	m.blobs[name] = v
}

// DeleteBlob implements [Blobs].
func (m *MemBlobs) DeleteBlob(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, name)
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
