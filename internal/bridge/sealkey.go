package bridge

import (
	"crypto/rand"
	"encoding/hex"
)

// SetSealKey makes key (SealKeySize bytes) the key of the requestState
// b seals and opens from now on: replicas that share a store
// share it, so that a retry sealed by one opens on another. A state
// sealed under the previous key no longer opens. Call it before serving.
func (b *Bridge) SetSealKey(key []byte) error {
	s, err := sealerWithKey(key)
	if err != nil {
		return err
	}
	b.sealer.Store(s)
	return nil
}

// randomInstance names one gateway among replicas.
func randomInstance() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
