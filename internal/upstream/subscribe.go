package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// Resource subscriptions, as mcpx holds them upstream.
//
// A host that subscribes to a resource makes mcpx subscribe once to that
// resource of its upstream, however many hosts asked; the hostserver fans
// the updates out. How depends on the upstream's revision: a legacy
// session is sent resources/subscribe (and resources/unsubscribe at the
// end); a 2026-07-28 session, which has no such method, gets a
// subscriptions/listen of its own naming the one URI, held open for as
// long as the subscription lasts and cancelled to end it. One listen per
// URI, not one for all: adding or dropping a URI never reopens the others,
// so no update of theirs falls into a gap.
//
// A subscription outlives the session it was made on: when that session
// ends (a crash, a reload) or the upstream ends the listen, the
// subscription is made again on the server's next session, with a
// growing pause between tries, and the hosts are told the resource was
// updated, since an update may have gone unheard meanwhile. While a
// server holds subscriptions it is not stopped for being idle: its
// updates would be lost.

// resubscribeMin and resubscribeMax bound the pause before a lost
// subscription is made again.
const (
	resubscribeMin = 250 * time.Millisecond
	resubscribeMax = 30 * time.Second
)

// held is one resource subscription made on one session.
type held struct {
	// lost is closed when the subscription is gone without release: the
	// session ended, or the upstream ended the listen.
	lost <-chan struct{}
	// release ends the subscription upstream, once.
	release func(ctx context.Context) error
}

// subscribeResource subscribes to uri on s, by the means of s's revision.
func (s *Session) subscribeResource(ctx context.Context, uri string) (*held, error) {
	if !s.Modern() {
		params := &jsonrpc.Object{}
		params.Set("uri", jsonrpc.MustMarshal(uri))
		if _, err := s.Call(ctx, mcp.MethodResourcesSubscribe, params); err != nil {
			return nil, err
		}
		s.subs.Add(1)
		var once sync.Once
		return &held{lost: s.done, release: func(ctx context.Context) error {
			var err error
			once.Do(func() {
				s.subs.Add(-1)
				if s.Err() == nil {
					params := &jsonrpc.Object{}
					params.Set("uri", jsonrpc.MustMarshal(uri))
					_, err = s.Call(ctx, mcp.MethodResourcesUnsubscribe, params)
				}
			})
			return err
		}}, nil
	}
	ack := make(chan json.RawMessage, 1)
	filter := &jsonrpc.Object{}
	filter.Set("resourceSubscriptions", jsonrpc.MustMarshal([]string{uri}))
	params := &jsonrpc.Object{}
	params.Set("notifications", filter.Bytes())
	r, err := s.Start(mcp.MethodSubscriptionsListen, params, nil, StartOptions{OnAcknowledged: func(p json.RawMessage) {
		select {
		case ack <- p:
		default:
		}
	}})
	if err != nil {
		return nil, err
	}
	s.listening.Add(1) // not a call in flight
	var once sync.Once
	end := func(reason string) {
		once.Do(func() {
			s.listening.Add(-1)
			s.Cancel(r, reason)
		})
	}
	select {
	case p := <-ack:
		var a struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		}
		if json.Unmarshal(p, &a) != nil || !slices.Contains(a.Notifications.ResourceSubscriptions, uri) {
			end("mcpx: the subscription was not acknowledged")
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams,
				"server %q did not acknowledge a subscription to resource %s", s.Server, strconv.Quote(uri))
		}
	case <-r.Done():
		end("")
		_, err := r.Result()
		if err == nil {
			err = errors.New("the upstream answered the listen at once")
		}
		return nil, fmt.Errorf("subscribing to resource %s: %w", strconv.Quote(uri), err)
	case <-ctx.Done():
		end(context.Cause(ctx).Error())
		return nil, context.Cause(ctx)
	}
	s.subs.Add(1)
	var released sync.Once
	return &held{lost: r.Done(), release: func(context.Context) error {
		released.Do(func() {
			s.subs.Add(-1)
			end("mcpx: no host is subscribed to " + uri + " any more")
		})
		return nil
	}}, nil
}

// acknowledged hands a notifications/subscriptions/acknowledged to the
// listen it names, and reports whether one took it.
func (c *Conn) acknowledged(params json.RawMessage) bool {
	obj, err := jsonrpc.ParseObject(params)
	if err != nil {
		return false
	}
	raw, ok := mcp.Meta(obj).Get(mcp.MetaSubscriptionID)
	if !ok {
		return false
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return false
	}
	c.mu.Lock()
	r := c.pending[id]
	c.mu.Unlock()
	if r == nil || r.onAck == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.forgotten {
		r.onAck(params)
	}
	return true
}

// listenCancelled ends mcpx's subscriptions/listen that the upstream
// tore down with notifications/cancelled (stdio), and reports whether
// requestID named one.
func (c *Conn) listenCancelled(requestID json.RawMessage, reason string) bool {
	id, err := strconv.ParseInt(string(requestID), 10, 64)
	if err != nil {
		return false
	}
	c.mu.Lock()
	r := c.pending[id]
	if r == nil || r.Method != mcp.MethodSubscriptionsListen {
		c.mu.Unlock()
		return false
	}
	delete(c.pending, id)
	c.mu.Unlock()
	r.err = fmt.Errorf("the upstream ended the listen: %s", reason)
	close(r.done)
	return true
}
