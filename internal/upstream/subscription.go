package upstream

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// releaseDeadline bounds the upstream's unsubscribe when a subscription
// is closed.
const releaseDeadline = 10 * time.Second

// errUnsubscribed is the cause that ends a subscription's attempts when
// it is closed.
var errUnsubscribed = errors.New("the subscription was closed")

// Subscription is mcpx's standing subscription to one resource of one
// server (see subscribe.go), kept across the server's sessions by a
// goroutine the pool waits for, until Close or the pool's shutdown. Its
// updates reach the pool's OnNotify as notifications/resources/updated,
// like any other. Close must be called once; it is safe to call from any
// goroutine.
type Subscription struct {
	p           *Pool
	server, uri string
	cancel      context.CancelCauseFunc // ends a resubscription under way
	stop        chan struct{}           // closed by Close
	done        chan struct{}           // closed when keep has returned
	err         error                   // the upstream's unsubscribe, set before done
}

// Subscribe subscribes to resource uri of server and keeps it subscribed
// until Close. It returns once the subscription is made on a live session
// (ctx bounds the wait), or with the upstream's refusal.
func (p *Pool) Subscribe(ctx context.Context, server, uri string) (*Subscription, error) {
	s, err := p.Session(ctx, server)
	if err != nil {
		return nil, err
	}
	h, err := s.subscribeResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	kctx, cancel := context.WithCancelCause(context.Background())
	sub := &Subscription{p: p, server: server, uri: uri, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cancel(ErrClosed)
		_ = h.release(ctx)
		return nil, ErrClosed
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go sub.keep(kctx, h)
	return sub, nil
}

// Close ends the subscription upstream and returns the upstream's answer
// to that (nil where none was needed: the session had ended, or a 2026
// listen was cancelled). ctx bounds only the wait.
func (sub *Subscription) Close(ctx context.Context) error {
	sub.cancel(errUnsubscribed)
	close(sub.stop)
	select {
	case <-sub.done:
		return sub.err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// keep holds the subscription: h while its session lasts, then one made
// again on the server's next session.
func (sub *Subscription) keep(ctx context.Context, h *held) {
	defer sub.p.wg.Done()
	defer close(sub.done)
	log := sub.p.log.With("server", sub.server, "uri", sub.uri)
	for {
		select {
		case <-sub.stop:
			rctx, cancel := context.WithTimeout(context.Background(), releaseDeadline)
			sub.err = h.release(rctx)
			cancel()
			return
		case <-sub.p.stop:
			return // every session is being stopped
		case <-h.lost:
		}
		_ = h.release(ctx) // nothing is sent: its session or listen is gone
		log.Info("lost a resource subscription upstream: making it again")
		if h = sub.again(ctx, log); h == nil {
			return
		}
		log.Info("made a lost resource subscription again")
		// An update may have come while there was no subscription.
		if sub.p.opts.OnNotify != nil {
			params := &jsonrpc.Object{}
			params.Set("uri", jsonrpc.MustMarshal(sub.uri))
			sub.p.opts.OnNotify(sub.server, jsonrpc.NewNotification(mcp.MethodResourcesUpdated, params.Bytes()))
		}
	}
}

// again makes the subscription on the server's next session, pausing
// longer after each failure; nil once it is closed, the pool stops, or the
// server is no longer configured.
func (sub *Subscription) again(ctx context.Context, log *slog.Logger) *held {
	pause := resubscribeMin
	for {
		t := time.NewTimer(pause)
		select {
		case <-sub.stop:
			t.Stop()
			return nil
		case <-sub.p.stop:
			t.Stop()
			return nil
		case <-t.C:
		}
		s, err := sub.p.Session(ctx, sub.server)
		if errors.Is(err, ErrUnknownServer) || errors.Is(err, ErrClosed) {
			log.Warn("gave up a resource subscription", "err", err)
			return nil
		}
		if err == nil {
			var h *held
			if h, err = s.subscribeResource(ctx, sub.uri); err == nil {
				return h
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		log.Warn("could not make a lost resource subscription again", "err", err, "retryIn", min(2*pause, resubscribeMax))
		pause = min(2*pause, resubscribeMax)
	}
}
