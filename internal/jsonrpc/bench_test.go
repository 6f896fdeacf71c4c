package jsonrpc

import (
	"bytes"
	"io"
	"testing"
)

// The JSON-RPC hot paths of one relayed call and of a progress burst, on
// messages as MCP peers write them:
//
//	go test -run '^$' -bench . -benchmem ./internal/jsonrpc/

var (
	benchRequest  = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"demo__echo","arguments":{"n":12345},"_meta":{"progressToken":"p-42"}}}`)
	benchResponse = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"{\"n\":12345}"}],"structuredContent":{"n":12345}}}`)
	benchProgress = []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpx-42","progress":17,"total":200,"message":"step 17"}}`)
)

// cycle is an endless stream of lines.
type cycle struct {
	data []byte
	off  int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.off:])
	c.off = (c.off + n) % len(c.data)
	return n, nil
}

// BenchmarkReadLine frames one line of a stream of requests, progress and
// responses.
func BenchmarkReadLine(b *testing.B) {
	stream := bytes.Join([][]byte{benchRequest, benchProgress, benchResponse, benchProgress}, []byte("\n"))
	stream = append(stream, '\n')
	r := NewReader(&cycle{data: stream}, 0)
	b.SetBytes(int64(len(stream) / 4))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ReadLine(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct {
		name string
		line []byte
	}{{"request", benchRequest}, {"response", benchResponse}, {"progress", benchProgress}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(c.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode encodes a response into a reused buffer, as Writer does.
func BenchmarkEncode(b *testing.B) {
	m, err := Decode(benchResponse)
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = m.Append(buf[:0])
	}
}

// BenchmarkWriter writes one message, framed, to a stream.
func BenchmarkWriter(b *testing.B) {
	m, err := Decode(benchProgress)
	if err != nil {
		b.Fatal(err)
	}
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseObject splits a progress notification's params.
func BenchmarkParseObject(b *testing.B) {
	m, err := Decode(benchProgress)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseObject(m.Params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewriteToken is what relaying one progress notification does
// to its params: the upstream token replaced by the host's, every other
// byte kept.
func BenchmarkRewriteToken(b *testing.B) {
	m, err := Decode(benchProgress)
	if err != nil {
		b.Fatal(err)
	}
	host := []byte(`"p-42"`)
	b.ReportAllocs()
	for b.Loop() {
		o, err := ParseObject(m.Params)
		if err != nil {
			b.Fatal(err)
		}
		o.Set("progressToken", host)
		_ = o.Bytes()
	}
}

// BenchmarkRelayProgressLine is a progress notification's whole trip
// through a relay's framing: read the line, decode it, rewrite its token,
// encode and write it.
func BenchmarkRelayProgressLine(b *testing.B) {
	r := NewReader(&cycle{data: append(bytes.Clone(benchProgress), '\n')}, 0)
	w := NewWriter(io.Discard)
	host := []byte(`"p-42"`)
	b.ReportAllocs()
	for b.Loop() {
		line, err := r.ReadLine()
		if err != nil {
			b.Fatal(err)
		}
		m, err := Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		o, err := ParseObject(m.Params)
		if err != nil {
			b.Fatal(err)
		}
		o.Set("progressToken", host)
		if err := w.Write(NewNotification(m.Method, o.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
