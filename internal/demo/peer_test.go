package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"mcpx/internal/jsonrpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deadline bounds every wait in these tests.
const deadline = 10 * time.Second

// modernMeta is a complete 2026-07-28 _meta, with extra members appended.
func modernMeta(extra string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
}

// req builds a request line.
func req(id, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params)
}

// callReq builds a tools/call line; meta may be "".
func callReq(id, tool, args, meta string) string {
	params := fmt.Sprintf(`{"name":%q,"arguments":%s`, tool, args)
	if meta != "" {
		params += `,"_meta":` + meta
	}
	return req(id, "tools/call", params+"}")
}

func cancelNote(id, reason string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":%q}}`, id, reason)
}

// peer is a test client driving Serve over pipes with raw lines.
type peer struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte // every line Serve wrote, in order
	events chan Event  // every Event, unless the test set OnEvent
	done   chan error  // Serve's result
	cancel context.CancelFunc
	once   sync.Once
	err    error
}

func startPeer(t *testing.T, opts *Options) *peer {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	p := &peer{t: t, lines: make(chan []byte, 1<<14), events: make(chan Event, 1<<14), done: make(chan error, 1)}
	if opts.OnEvent == nil {
		opts.OnEvent = func(e Event) { p.events <- e }
	}
	var outR *io.PipeReader
	p.in, outR, p.cancel = onPipes(Serve, opts, p.done)
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- bytes.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() { p.close() })
	return p
}

// onPipes runs serve (Serve or ServeHTTP) with opts on pipes, and returns
// its input, its output (ended when it returns) and its ctx's cancel; its
// result goes to done.
func onPipes(serve func(context.Context, io.Reader, io.Writer, *Options) error, opts *Options, done chan<- error) (*io.PipeWriter, *io.PipeReader, context.CancelFunc) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := serve(ctx, inR, outW, opts)
		outW.Close()
		done <- err
	}()
	return inW, outR, cancel
}

// close ends the input, drains the output and returns Serve's result.
func (p *peer) close() error {
	p.once.Do(func() {
		p.in.Close()
		p.err = p.finish()
	})
	return p.err
}

// finish drains the output until Serve is done, within the deadline.
func (p *peer) finish() error {
	defer p.cancel()
	timeout := time.After(deadline)
	for {
		select {
		case _, ok := <-p.lines:
			if !ok {
				select {
				case err := <-p.done:
					return err
				case <-timeout:
					p.t.Error("Serve did not return")
					return nil
				}
			}
		case <-timeout:
			p.t.Error("Serve did not return")
			return nil
		}
	}
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing %s: %v", line, err)
	}
}

// line returns the next line Serve wrote.
func (p *peer) line() []byte {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("output closed")
		}
		return l
	case <-time.After(deadline):
		p.t.Fatal("no output within the deadline")
	}
	return nil
}

// msg returns the next message Serve wrote.
func (p *peer) msg() *jsonrpc.Message {
	p.t.Helper()
	l := p.line()
	m, err := jsonrpc.Decode(l)
	if err != nil {
		p.t.Fatalf("decoding %s: %v", l, err)
	}
	return m
}

// until reads messages up to the response to id: it returns the
// notifications before it and the response. Any other response fails.
func (p *peer) until(id string) ([]*jsonrpc.Message, *jsonrpc.Message) {
	p.t.Helper()
	var notes []*jsonrpc.Message
	for {
		m := p.msg()
		switch {
		case m.IsNotification():
			notes = append(notes, m)
		case m.ID.String() == id:
			return notes, m
		default:
			p.t.Fatalf("unexpected message %s while waiting for %s", m.Encode(), id)
		}
	}
}

// call sends a request line and returns its response, failing on notifications.
func (p *peer) call(id, line string) *jsonrpc.Message {
	p.t.Helper()
	p.send(line)
	notes, m := p.until(id)
	if len(notes) > 0 {
		p.t.Fatalf("unexpected notifications %s", notes[0].Encode())
	}
	return m
}

// event waits for the first event that matches.
func (p *peer) event(match func(Event) bool) Event {
	p.t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case e := <-p.events:
			if match(e) {
				return e
			}
		case <-timeout:
			p.t.Fatal("no matching event within the deadline")
		}
	}
}

// finished matches the finished event of request id.
func finished(id string) func(Event) bool {
	return func(e Event) bool { return e.Event == EventFinished && string(e.ID) == id }
}

// result returns a response's result, failing on an error.
func result(t *testing.T, m *jsonrpc.Message) json.RawMessage {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error response: %v %s", m.Error, m.Error.Data)
	}
	return m.Result
}

// rpcError returns a response's error, failing on a result.
func rpcError(t *testing.T, m *jsonrpc.Message) *jsonrpc.Error {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want an error, got result %s", m.Result)
	}
	return m.Error
}

// toolOut is the parts of a tool result the tests read.
type toolOut struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
}

func decodeTool(t *testing.T, m *jsonrpc.Message) toolOut {
	t.Helper()
	var out toolOut
	if err := json.Unmarshal(result(t, m), &out); err != nil {
		t.Fatalf("decoding tool result %s: %v", m.Result, err)
	}
	return out
}

func (o toolOut) text() string {
	if len(o.Content) == 0 {
		return ""
	}
	return o.Content[0].Text
}
