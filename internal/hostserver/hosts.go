package hostserver

import (
	"bytes"
	"sort"
	"strings"

	"mcpx/internal/hosthttp"
	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// HostInfo is one connected host as status shows it.
type HostInfo struct {
	ID string // the host session: host-N (a stream), http-N (an HTTP session or one 2026-07-28 request)
	// Client is the clientInfo.name the host sent: in initialize, or in
	// its latest 2026-07-28 request; "" before it sent one.
	Client   string
	Protocol string // the negotiated revision; "" before initialize or a request
	// Profile is the tool-call timer its calls get, per the current config.
	Profile hostprofile.Profile
}

// Hosts returns the connected hosts, by id: each stream connection, each
// legacy HTTP session, and each 2026-07-28 HTTP request in flight.
func (s *Server) Hosts() []HostInfo {
	s.hostsMu.Lock()
	sessions := make([]*hostSession, 0, len(s.streams))
	for hs := range s.streams {
		sessions = append(sessions, hs)
	}
	faces := append([]*hosthttp.Server(nil), s.faces...)
	s.hostsMu.Unlock()
	out := make([]HostInfo, 0, len(sessions))
	for _, hs := range sessions {
		hs.mu.Lock()
		info := HostInfo{ID: hs.id, Client: hs.clientName, Protocol: hs.version}
		hs.mu.Unlock()
		out = append(out, info)
	}
	for _, h := range faces {
		for _, hs := range h.Live() {
			_, version, client := hs.Describe()
			out = append(out, HostInfo{ID: hs.ID(), Client: client, Protocol: version})
		}
	}
	for i := range out {
		out[i].Profile = s.relay.HostProfile(out[i].Client)
	}
	sort.Slice(out, func(i, j int) bool { return lessID(out[i].ID, out[j].ID) })
	return out
}

// lessID orders host ids by kind, then number.
func lessID(a, b string) bool {
	ka, na, _ := strings.Cut(a, "-")
	kb, nb, _ := strings.Cut(b, "-")
	if ka != kb {
		return ka < kb
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return na < nb
}

// trackStream adds or removes a stream connection's session from those
// Hosts lists.
func (s *Server) trackStream(hs *hostSession, live bool) {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	if !live {
		delete(s.streams, hs)
		return
	}
	if s.streams == nil {
		s.streams = map[*hostSession]struct{}{}
	}
	s.streams[hs] = struct{}{}
}

// hostProfile returns the profile of the host behind req, whose timer its
// call runs under. A legacy host is the name its initialize sent; a
// 2026-07-28 request names its host in its own _meta, and that name is
// kept for status.
func (hs *hostSession) hostProfile(req *request) hostprofile.Profile {
	hs.mu.Lock()
	name := hs.clientName
	hs.mu.Unlock()
	if req.modern {
		name = hs.srv.clientName(req.hostMeta())
		hs.mu.Lock()
		hs.clientName, hs.version = name, req.version
		hs.mu.Unlock()
	}
	return hs.srv.relay.HostProfile(name)
}

// clientMemo is the last clientInfo a 2026-07-28 request sent and its
// name: the next request of the same host is read without a parse or an
// allocation (three a call less, BenchmarkRelayCallModern).
type clientMemo struct {
	raw  []byte
	name string
}

// clientName returns the name in a 2026-07-28 request's clientInfo ("" if
// it has none), remembering the last clientInfo read.
func (s *Server) clientName(meta *jsonrpc.Object) string {
	raw, ok := meta.Get(mcp.MetaClientInfo)
	if !ok {
		return ""
	}
	if m := s.lastClient.Load(); m != nil && bytes.Equal(m.raw, raw) {
		return m.name
	}
	name := clientInfoName(raw)
	s.lastClient.Store(&clientMemo{raw: bytes.Clone(raw), name: name})
	return name
}

// clientInfoName returns the name member of a clientInfo object, raw; ""
// if it is not an object with a string name.
func clientInfoName(raw []byte) string {
	info, err := jsonrpc.ParseObject(raw)
	if err != nil {
		return ""
	}
	name, _ := mcp.MetaString(info, "name")
	return name
}
