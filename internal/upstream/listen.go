package upstream

import (
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// A 2026-07-28 server sends notifications/tools/list_changed only on a
// subscriptions/listen stream the client opened for it (SEP-2575): without
// one, mcpx would never learn that a modern upstream's tools changed. So a
// modern session whose upstream declares tools.listChanged keeps one
// listen request open for its whole life, asking for toolsListChanged
// alone; its notifications reach [Session.notify] like any other. If the
// upstream ends the listen (an HTTP stream that breaks cannot be resumed
// in that revision), it is opened again after a pause, and the tool list
// is listed afresh, since a change may have gone unheard meanwhile.

// listenRetry bounds the pause before a listen is opened again.
const (
	listenRetryMin = 500 * time.Millisecond
	listenRetryMax = 30 * time.Second
)

// listensToolChanges reports whether the session should keep a listen
// open: a modern upstream that declared tools.listChanged.
func (s *Session) listensToolChanges() bool {
	if !s.Modern() {
		return false
	}
	var caps struct {
		Tools *struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	}
	return json.Unmarshal(s.capabilities, &caps) == nil && caps.Tools != nil && caps.Tools.ListChanged
}

// listen keeps a subscriptions/listen request open until the session ends,
// on a goroutine counted in the pool's WaitGroup.
func (s *Session) listen(log *slog.Logger) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		pause := listenRetryMin
		for first := true; ; first = false {
			if !first {
				s.dropTools() // a change may have gone unheard
			}
			params, _ := jsonrpc.ParseObject([]byte(`{"notifications":{"toolsListChanged":true}}`))
			r, err := s.Start(mcp.MethodSubscriptionsListen, params, nil, StartOptions{})
			if err != nil {
				return // the session has ended
			}
			opened := time.Now()
			s.listening.Store(1)
			select {
			case <-s.done:
				s.listening.Store(0)
				return
			case <-r.Done():
			}
			s.listening.Store(0)
			_, err = r.Result()
			if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); ok && rpcErr.Code == jsonrpc.CodeMethodNotFound {
				log.Warn("the upstream declares tools.listChanged but has no subscriptions/listen: mcpx will not hear of its tool changes")
				return
			}
			log.Debug("the upstream ended mcpx's subscriptions/listen", "err", err)
			if time.Since(opened) > listenRetryMax {
				pause = listenRetryMin
			}
			t := time.NewTimer(pause)
			select {
			case <-s.done:
				t.Stop()
				return
			case <-t.C:
			}
			pause = min(2*pause, listenRetryMax)
		}
	}()
}

// dropTools forgets the cached tool list and tells the pool's owner, as
// notifications/tools/list_changed does.
func (s *Session) dropTools() {
	s.toolsMu.Lock()
	s.tools = nil
	s.toolsMu.Unlock()
	if s.onToolsChanged != nil {
		s.onToolsChanged(s.Server)
	}
}
