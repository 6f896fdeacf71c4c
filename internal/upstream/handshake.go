package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// handshake settles the session's revision. version is a configured or
// cached revision; "" means probe: server/discover first, as the 2026-07-28
// stdio transport says, then initialize if the upstream is legacy.
func (s *Session) handshake(ctx context.Context, version string, probeTimeout time.Duration) error {
	switch {
	case version == "":
		modern, err := s.probe(ctx, probeTimeout)
		if err != nil {
			return err
		}
		if modern {
			return nil
		}
		err = s.initialize(ctx, mcp.LatestLegacy)
		if v := modernOnly(err); v != "" {
			// The probe went unanswered in time (the server may just be
			// slow to start), but the server refuses initialize naming
			// modern revisions: it is modern after all (see
			// docs/protocol-notes.md §6.4).
			s.version = v
			res, err := s.discover(ctx)
			if err != nil {
				return fmt.Errorf("server/discover: %w", err)
			}
			s.adoptDiscover(res)
			return nil
		}
		return err
	case mcp.IsModern(version):
		s.version = version
		res, err := s.discover(ctx)
		if err != nil {
			return fmt.Errorf("server/discover: %w", err)
		}
		s.adoptDiscover(res)
		return nil
	default:
		return s.initialize(ctx, version)
	}
}

// probe asks server/discover and reports whether the upstream is modern.
// A DiscoverResult or a recognized modern error means modern; any other
// error, or no answer within probeTimeout, means legacy. The fallback is
// never keyed to one error code.
func (s *Session) probe(ctx context.Context, probeTimeout time.Duration) (bool, error) {
	s.version = mcp.Version20260728
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := s.discover(pctx)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		if v := newestModern(res.SupportedVersions); v != "" {
			s.version = v
			s.adoptDiscover(res)
			return true, nil
		}
		s.version = ""
		return false, nil // a discover naming only legacy revisions
	case errors.As(err, &rpcErr):
		if rpcErr.Code == mcp.CodeUnsupportedProtocolVersion {
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(rpcErr.Data, &data)
			if v := newestModern(data.Supported); v != "" && v != s.version {
				s.version = v
				res, err := s.discover(ctx)
				if err != nil {
					return false, err
				}
				s.adoptDiscover(res)
				return true, nil
			}
		}
		s.version = ""
		return false, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		s.version = "" // silence: a legacy server ignoring unknown methods
		return false, nil
	default:
		return false, err
	}
}

// modernOnly returns the newest modern revision named in the data of an
// upstream's refusal of initialize ({"supported": [...]}), or "".
func modernOnly(err error) string {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return ""
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(rpcErr.Data, &data) != nil {
		return ""
	}
	return newestModern(data.Supported)
}

func newestModern(versions []string) string {
	for _, v := range mcp.Versions {
		if mcp.IsModern(v) && slices.Contains(versions, v) {
			return v
		}
	}
	return ""
}

// discover sends server/discover. A timeout forgets the request without
// cancelling it: the upstream may be legacy and know nothing of it.
func (s *Session) discover(ctx context.Context) (*mcp.DiscoverResult, error) {
	r, err := s.Start(mcp.MethodDiscover, nil, nil, StartOptions{})
	if err != nil {
		return nil, err
	}
	raw, err := s.await(ctx, r)
	if err != nil {
		return nil, err
	}
	var res mcp.DiscoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reading server/discover result: %w", err)
	}
	return &res, nil
}

func (s *Session) adoptDiscover(res *mcp.DiscoverResult) {
	s.capabilities = res.Capabilities
	s.logs = HasCapability(res.Capabilities, "logging")
	s.instructions = res.Instructions
	var meta map[string]json.RawMessage
	if json.Unmarshal(res.Meta, &meta) == nil {
		_ = json.Unmarshal(meta[mcp.MetaServerInfo], &s.serverInfo)
	}
}

// initialize runs the legacy handshake. initialize is never cancelled: on
// timeout the caller stops the process instead.
func (s *Session) initialize(ctx context.Context, version string) error {
	s.version = version
	params, _ := jsonrpc.ParseObject(jsonrpc.MustMarshal(struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}{version, relayedCapabilities, s.clientInfo}))
	r, err := s.conn.Start(mcp.MethodInitialize, params, StartOptions{})
	if err != nil {
		return err
	}
	raw, err := s.await(ctx, r)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("reading initialize result: %w", err)
	}
	if !mcp.IsLegacy(res.ProtocolVersion) {
		return fmt.Errorf("initialize: upstream chose protocol version %q, which mcpx does not speak", res.ProtocolVersion)
	}
	s.version = res.ProtocolVersion
	s.capabilities = res.Capabilities
	s.serverInfo = res.ServerInfo
	s.instructions = res.Instructions
	return s.conn.Notify(mcp.MethodInitialized, nil)
}

// await waits for r without ever cancelling it upstream: used for the
// handshake, where a timeout ends the session instead.
func (s *Session) await(ctx context.Context, r *Request) (json.RawMessage, error) {
	select {
	case <-r.Done():
		return r.Result()
	case <-ctx.Done():
		s.conn.Forget(r)
		return nil, context.Cause(ctx)
	}
}
