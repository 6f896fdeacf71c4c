package outq

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrStalled is the error of a peer that stopped reading its input.
var ErrStalled = errors.New("stopped reading its input")

// WriteStalling writes b to out, which is f or a writer of f's descriptor,
// allowing each chunk stall (0: no limit) to get through: a write that
// makes no progress for stall fails with ErrStalled, one that makes some
// carries on.
func WriteStalling(f *os.File, out io.Writer, b []byte, stall time.Duration) error {
	for len(b) > 0 {
		if stall > 0 {
			_ = f.SetWriteDeadline(time.Now().Add(stall))
		}
		n, err := out.Write(b)
		b = b[n:]
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && n == 0 {
				return fmt.Errorf("%w for %s", ErrStalled, stall)
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return err
			}
		}
	}
	return nil
}
