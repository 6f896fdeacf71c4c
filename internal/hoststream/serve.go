package hoststream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"mcpx/internal/apitype"
	"mcpx/internal/sock"
)

// Stream is a host's MCP stream to the daemon, after the upgrade
// (localclient.HostStream).
type Stream interface {
	io.ReadWriteCloser
	// CloseWrite tells the daemon the host has nothing more to send: it
	// ends the host's session.
	CloseWrite() error
}

// Events are the daemon's events on a handed-off host's socket
// (localclient.Handoff). Next's error means the daemon closed the socket
// or died; Close ends the handoff.
type Events interface {
	Next() (*apitype.HandoffEvent, error)
	Close() error
}

// Options say how Serve reaches the daemon.
type Options struct {
	// Dial opens a stream to the daemon, starting one if none runs.
	Dial func(ctx context.Context) (Stream, error)
	// HandOff, if set, offers the host's stdio to the daemon: in and out
	// are the host's descriptors (its output, read; its input, written),
	// table a handoff table file, start what serve had of the host's
	// stream (nil the first time). It returns the daemon's events if the
	// daemon took them, or else a stream to forward on (an older daemon).
	// nil: Serve only forwards.
	HandOff func(ctx context.Context, in, out, table int, start *apitype.HandoffStart) (Events, Stream, error)
	Log     *slog.Logger
	// MaxLine bounds one host message (0: no bound).
	MaxLine int
}

// Serve is `mcpx serve`'s side of the host's stdio link: it connects the
// host on host to the daemon until the host leaves (nil) or ctx ends.
// Where it can it hands the host's stdio to the daemon (handover.go), and
// forwards message by message (forward.go) only if the daemon does not
// take it or gives it back; either way a daemon that stops or dies costs
// the host nothing but the calls it had in flight, which are answered
// with an mcpx error, and the next message reconnects and replays the
// host's handshake. Serve closes host.
func Serve(ctx context.Context, host *Stdio, opts Options) error {
	f := &forwarder{host: host, log: opts.Log, maxLine: opts.MaxLine, dial: opts.Dial}
	switch err := canHandOff(host); {
	case opts.HandOff == nil:
		f.log.Debug("mcpx serve: forwarding the host's stdio (handoff off)")
	case err != nil:
		f.log.Debug("mcpx serve: forwarding the host's stdio", "why", err)
	default:
		f.detach = host.Detach
		f.handoff = func(ctx context.Context, table *os.File, start *apitype.HandoffStart) (Events, Stream, error) {
			return opts.HandOff(ctx, host.inFD, host.outFD, int(table.Fd()), start)
		}
	}
	return f.run(ctx)
}

// canHandOff reports why the host's stdio cannot be handed to the daemon,
// or nil if it can: both must be this process's own pipes or sockets.
func canHandOff(s *Stdio) error {
	if s.inFD < 0 || s.outFD < 0 {
		return errors.New("stdin or stdout is not this process's own")
	}
	for _, fd := range []int{s.inFD, s.outFD} {
		if err := sock.CheckStream(fd); err != nil {
			return fmt.Errorf("handing the host's stdio to the daemon: %w", err)
		}
	}
	return nil
}
