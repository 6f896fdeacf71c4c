package upstream

import (
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// A 2026-07-28 server sends list_changed notifications only on a
// subscriptions/listen stream the client opened for them (SEP-2575):
// without one, mcpx would never learn that a modern upstream's tools,
// prompts or resources changed. So a modern session whose upstream
// declares listChanged for any of them keeps one listen request open for
// its whole life, asking for those; its notifications reach
// [Session.notify] like any other. If the upstream ends the listen (an
// HTTP stream that breaks cannot be resumed in that revision), it is
// opened again after a pause, and the lists are treated as changed, since
// a change may have gone unheard meanwhile.

// listenRetry bounds the pause before a listen is opened again.
const (
	listenRetryMin = 500 * time.Millisecond
	listenRetryMax = 30 * time.Second
)

// listenKinds returns the list changes a modern upstream declared
// (listChanged under tools, prompts or resources), as the notification
// names a listen asks for; none for a legacy session.
func (s *Session) listenKinds() []string {
	if !s.Modern() {
		return nil
	}
	type listChanged struct {
		ListChanged bool `json:"listChanged"`
	}
	var caps struct {
		Tools     *listChanged `json:"tools"`
		Prompts   *listChanged `json:"prompts"`
		Resources *listChanged `json:"resources"`
	}
	if json.Unmarshal(s.capabilities, &caps) != nil {
		return nil
	}
	var kinds []string
	for _, k := range []struct {
		c    *listChanged
		name string
	}{{caps.Tools, "toolsListChanged"}, {caps.Prompts, "promptsListChanged"}, {caps.Resources, "resourcesListChanged"}} {
		if k.c != nil && k.c.ListChanged {
			kinds = append(kinds, k.name)
		}
	}
	return kinds
}

// listChangedOf is the notification each listen kind stands for.
var listChangedOf = map[string]string{
	"toolsListChanged":     mcp.MethodToolsListChanged,
	"promptsListChanged":   ListPrompts.Changed,
	"resourcesListChanged": ListResources.Changed,
}

// listen keeps a subscriptions/listen request open until the session ends,
// on a goroutine counted in the pool's WaitGroup.
func (s *Session) listen(log *slog.Logger, kinds []string) {
	filter := &jsonrpc.Object{}
	for _, k := range kinds {
		filter.Set(k, json.RawMessage("true"))
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		pause := listenRetryMin
		for first := true; ; first = false {
			if !first { // a change may have gone unheard
				for _, k := range kinds {
					s.notify(jsonrpc.NewNotification(listChangedOf[k], nil))
				}
			}
			params := &jsonrpc.Object{}
			params.Set("notifications", filter.Bytes())
			r, err := s.Start(mcp.MethodSubscriptionsListen, params, nil, StartOptions{})
			if err != nil {
				return // the session has ended
			}
			opened := time.Now()
			s.listening.Add(1)
			select {
			case <-s.done:
				s.listening.Add(-1)
				return
			case <-r.Done():
			}
			s.listening.Add(-1)
			_, err = r.Result()
			if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); ok && rpcErr.Code == jsonrpc.CodeMethodNotFound {
				log.Warn("the upstream declares listChanged but has no subscriptions/listen: mcpx will not hear of its list changes", "kinds", kinds)
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
