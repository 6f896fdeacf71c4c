package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxMessageBytes is the message size limit when none is configured.
const DefaultMaxMessageBytes = 16 << 20

// OversizeError reports a line longer than the reader's limit. The line was
// discarded up to its newline and the stream stays usable. ID is the
// message's id when it could be read from the line's start.
type OversizeError struct {
	Limit int
	ID    ID
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("message exceeds the limit of %d bytes", e.Limit)
}

// Reader reads newline-delimited messages. Blank lines are skipped. It is
// used by one goroutine.
type Reader struct {
	br    *bufio.Reader
	limit int
	// The line being read: its first blockSize bytes in buf, the rest of
	// a longer one in rest, n bytes in all.
	buf  []byte
	rest lineRest
	n    int
	held bool // buf holds the start of a line not returned (ReadLine failed)
}

// blockSize is what a line is read into on the heap, kept from line to
// line: the rest of a longer line goes to memory mapped outside the heap
// (rest.go), let go before ReadLine returns, and a line within the limit
// is copied once into a buffer of its length.
const blockSize = 64 << 10

// NewReader returns a Reader over r with a 64 KiB buffer. A limit of 0
// means [DefaultMaxMessageBytes].
func NewReader(r io.Reader, limit int) *Reader {
	return NewReaderSize(r, limit, 64<<10)
}

// NewReaderSize is NewReader with a buffer of size bytes. Lines longer
// than the buffer are read whole all the same; a small buffer suits a
// stream of small messages that is often idle (a host's requests), a
// large one a stream that carries large results.
func NewReaderSize(r io.Reader, limit, size int) *Reader {
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, size), limit: limit}
}

// prefixKeep is how much of an oversize line is kept to look for its id.
const prefixKeep = 4 << 10

// ReadLine returns the next non-blank line without its newline. The slice is
// valid until the next call. A line over the limit yields *OversizeError and
// the reader moves past it. At the end of the stream it returns io.EOF; a
// final line without a newline is returned first.
func (r *Reader) ReadLine() ([]byte, error) {
	r.held = true // until a line is returned
	defer r.rest.release()
	for {
		r.reset()
		over := false
		for {
			chunk, err := r.br.ReadSlice('\n')
			if !over {
				if r.n+len(chunk) > r.limit+1 { // +1: the newline does not count
					over = true
					r.add(chunk[:min(len(chunk), max(0, prefixKeep-r.n))])
					r.rest.release() // the kept prefix is in buf
				} else {
					r.add(chunk)
				}
			}
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) && r.n > r.limit && !over {
				over = true // a final line has no newline to not count
			}
			if errors.Is(err, io.EOF) && r.n > 0 && !over {
				line := bytes.TrimSpace(r.line())
				if len(line) == 0 {
					return nil, io.EOF
				}
				r.held = false
				return line, nil
			}
			if over && errors.Is(err, io.EOF) {
				r.held = false
				return nil, &OversizeError{Limit: r.limit, ID: PeekID(r.buf)}
			}
			r.held = !over // an oversize line's kept prefix is not its start to hand on
			if r.held {
				r.buf = append(r.buf, r.rest.b...) // for Unread, once rest is given back
			}
			return nil, err
		}
		if over {
			r.held = false
			return nil, &OversizeError{Limit: r.limit, ID: PeekID(r.buf)}
		}
		line := bytes.TrimRight(r.line(), "\r\n")
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		r.held = false
		return line, nil
	}
}

// reset empties the line being read, keeping buf.
func (r *Reader) reset() {
	if r.n > blockSize {
		longLines.note(r.n >= giveBackAt)
	}
	if cap(r.buf) > 2*blockSize { // a line handed to Unread
		r.buf = nil
	}
	r.buf = r.buf[:0]
	r.rest.release()
	r.n = 0
}

// add appends chunk to the line being read.
func (r *Reader) add(chunk []byte) {
	r.n += len(chunk)
	if r.rest.b == nil {
		room := blockSize - len(r.buf)
		if len(chunk) <= room {
			r.buf = append(r.buf, chunk...)
			return
		}
		r.buf = append(r.buf, chunk[:room]...)
		chunk = chunk[room:]
		r.rest.reserve(r.limit + 1 - blockSize)
	}
	r.rest.add(chunk)
}

// line returns the line read, in one slice: buf itself, or buf and rest
// copied into a buffer of the line's length.
func (r *Reader) line() []byte {
	if r.rest.b == nil {
		return r.buf
	}
	line := make([]byte, 0, r.n)
	line = append(line, r.buf...)
	return append(line, r.rest.b...)
}

// Unread returns what the reader holds and has not returned: after
// ReadLine failed (the stream was closed under it), the start of a line
// whose end it had not read; and the bytes read past the last line. It
// hands the rest of the stream to another reader. The bytes of a line
// found oversize are not kept and not returned.
func (r *Reader) Unread() []byte {
	b, _ := r.br.Peek(r.br.Buffered())
	var out []byte
	if r.held {
		out = append(out, r.buf...)
	}
	return append(out, b...)
}

// LineBuffered reports whether a complete non-blank line is buffered: the
// next ReadLine returns without reading from the stream. A relay that
// writes what it reads can batch its writes while this holds, and flush
// before it would wait.
func (r *Reader) LineBuffered() bool {
	b, _ := r.br.Peek(r.br.Buffered())
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		if len(bytes.TrimSpace(b[:i])) > 0 {
			return true
		}
		b = b[i+1:]
	}
}

// responsePrefix starts every message with an id that [Message.Encode]
// writes; in a response, the id is followed by its result or error.
const responsePrefix = `{"jsonrpc":"2.0","id":`

// ResponseID returns the id of a response as [Message.Encode] writes it
// (which a peer that writes with this package's encoder always does),
// without decoding the rest: ok is false for any other line. Saves
// decoding a result that may be large (BenchmarkDecode, against which it
// reads only the first bytes, in internal/jsonrpc).
func ResponseID(line []byte) (id ID, ok bool) {
	if !bytes.HasPrefix(line, []byte(responsePrefix)) {
		return ID{}, false
	}
	i := len(responsePrefix)
	end, err := scanValue(line, i)
	if err != nil || !bytes.HasPrefix(line[end:], []byte(`,"result":`)) && !bytes.HasPrefix(line[end:], []byte(`,"error":`)) {
		return ID{}, false
	}
	switch raw := line[i:end]; {
	case raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return ID{string(raw)}, true
	case string(raw) == "null":
		return NullID, true
	}
	return ID{}, false
}

// PeekID reads the top-level "id" member from the start of a possibly
// truncated JSON object. It returns the zero ID if none can be read.
func PeekID(prefix []byte) ID {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return ID{}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ID{}
		}
		key, _ := tok.(string)
		if key == "id" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return ID{}
			}
			switch c := raw[0]; {
			case c == '"':
				return ID{string(raw)}
			case c == '-' || (c >= '0' && c <= '9'):
				// A number that ends the prefix may have been cut short.
				if dec.InputOffset() < int64(len(prefix)) {
					return ID{string(raw)}
				}
			}
			return ID{}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ID{}
		}
	}
	return ID{}
}

// Writer writes newline-delimited messages. It is safe for concurrent use;
// each message is written whole.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write encodes m and writes it with a newline. After a write error every
// later call returns that error.
func (w *Writer) Write(m *Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = m.Append(w.buf[:0])
	w.buf = append(w.buf, '\n')
	_, w.err = w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not pin a large result's buffer
	}
	return w.err
}

// WriteRaw writes an already encoded message (no newline inside) and a newline.
func (w *Writer) WriteRaw(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = append(append(w.buf[:0], line...), '\n')
	_, w.err = w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return w.err
}
