package hosthttp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/outq"
	"mcpx/internal/principal"
)

// testSessions are host sessions that answer every request with an
// empty result: the seam the transport's own tests stand on (the real
// sessions are hostserver's, tested through this transport there).
// Each says what the transport asked of it (record).
type testSessions struct {
	n atomic.Int64

	mu    sync.Mutex
	calls []string // "http-N Method" or "Sessions Close", in order
}

func (f *testSessions) record(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

func (f *testSessions) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func newTestServer() (*Server, func()) {
	h := New(&testSessions{}, nil)
	return h, h.Close
}

func (f *testSessions) New(who principal.Principal, _ bool) Session {
	return &testSession{id: "http-" + strconv.FormatInt(f.n.Add(1), 10), who: who, f: f}
}
func (f *testSessions) NewQueue() *outq.Queue { return outq.New(outq.Options{}) }
func (f *testSessions) Knows(string) bool     { return true }
func (f *testSessions) Served(string) bool    { return true }
func (f *testSessions) MaxMessageBytes() int  { return 1 << 20 }
func (f *testSessions) Stopping() *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "stopping")
}
func (f *testSessions) Close() { f.record("Sessions Close") }
func (f *testSessions) ParamValues(context.Context, string, json.RawMessage) ([]ParamValue, bool) {
	return nil, false
}
func (f *testSessions) Refused(context.Context, slog.Level, string, string, ...any) {}

type testSession struct {
	id  string
	who principal.Principal
	f   *testSessions
}

func (s *testSession) ID() string                         { return s.id }
func (s *testSession) Describe() (string, string, string) { return s.who.ID(), "2025-11-25", "test" }
func (s *testSession) KeepSubject(*http.Request)          {}
func (s *testSession) Initialize(msg *jsonrpc.Message) []byte {
	return jsonrpc.NewResult(msg.ID, json.RawMessage(`{}`)).Encode()
}
func (s *testSession) Request(msg *jsonrpc.Message, out *Stream) {
	out.PushWhile(nil, jsonrpc.NewResult(msg.ID, json.RawMessage(`{}`)).Encode())
	out.Finish()
}
func (s *testSession) Notify(*jsonrpc.Message)  {}
func (s *testSession) Answer(*jsonrpc.Message)  {}
func (s *testSession) Watch(*Stream)            {}
func (s *testSession) CancelRequest(jsonrpc.ID) {}
func (s *testSession) End(why Ending) (int, error) {
	s.f.record(s.id + " End " + strconv.Itoa(int(why)))
	return 0, errors.New("ended")
}
func (s *testSession) Close() { s.f.record(s.id + " Close") }
func (s *testSession) Leave() { s.f.record(s.id + " Leave") }
