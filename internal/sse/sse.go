// Package sse reads and writes Server-Sent Events as the HTML standard
// defines them, for MCP's Streamable HTTP transport: events carry one
// JSON-RPC message each, may have an id (for resumption) and a retry delay,
// and comment lines keep a connection alive.
//
// A Reader is used by one goroutine. Write functions are not synchronised:
// the caller serialises writes to one stream.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Event is one dispatched event.
type Event struct {
	Type  string // "message" when the stream named none
	ID    string // the last event id seen on the stream, as the standard says
	Data  []byte // data lines joined with "\n"
	Retry time.Duration
	// HasRetry reports whether this event (or a field before it) set retry.
	HasRetry bool
}

// ErrTooLarge is returned when an event's data exceeds the reader's limit.
var ErrTooLarge = errors.New("event exceeds the size limit")

// Reader parses an event stream.
type Reader struct {
	br     *bufio.Reader
	limit  int
	lastID string // the last event id string: set when an event is dispatched
	idBuf  string // the last event id buffer: set by an id field
	first  bool
	retry  time.Duration
	hasRet bool
	line   []byte // readLine's buffer
}

// NewReader returns a Reader over r; limit bounds one event's data (and one
// line), 0 meaning 16 MiB.
//
// Its read buffer is bufio's default, 4 KiB: a line longer than that is
// read in pieces. (It was 64 KiB, allocated and cleared for every stream:
// a 2026-07-28 upstream answers every call mcpx makes with a stream of
// its own, as mcpx asks for progress.)
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 {
		limit = 16 << 20
	}
	return &Reader{br: bufio.NewReader(r), limit: limit, first: true}
}

// LastEventID returns the id of the last event seen, for Last-Event-ID.
// An event cut off by the end of the stream does not count.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry returns the reconnection delay the stream last set, if it set one.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.hasRet }

// Next returns the next event whose data is not empty. Events with empty
// data (a priming event that only sets an id or retry) update LastEventID
// and the retry delay but are not returned. At the end of the stream it returns io.EOF;
// an event cut off by the end is discarded, as the standard says.
func (r *Reader) Next() (*Event, error) {
	var (
		data    []byte
		hasData bool
		typ     string
	)
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			r.lastID = r.idBuf // dispatch, as the standard says, even of an empty event
			if !hasData || len(data) == 0 {
				data, hasData, typ = data[:0], false, ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			return &Event{Type: typ, ID: r.lastID, Data: data, Retry: r.retry, HasRetry: r.hasRet}, nil
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if len(data)+len(value)+1 > r.limit {
				return nil, ErrTooLarge
			}
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.idBuf = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 63); err == nil && allDigits(value) {
				r.retry, r.hasRet = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// readLine returns one line without its terminator (CRLF, LF or CR). The
// line is valid until the next call: it is the Reader's own buffer.
//
// It copies what is buffered up to the terminator in one go, not byte by
// byte, into a buffer kept from line to line.
func (r *Reader) readLine() ([]byte, error) {
	line := r.line[:0]
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				r.line = line
				if errors.Is(err, io.EOF) {
					return nil, io.EOF // an unterminated line ends nothing
				}
				return nil, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(line)+n > r.limit+16 {
			r.line = line
			return nil, ErrTooLarge
		}
		line = append(line, buf[:n]...)
		if i < 0 {
			_, _ = r.br.Discard(n)
			continue
		}
		c := buf[i]
		_, _ = r.br.Discard(i + 1)
		if c == '\r' {
			if next, err := r.br.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.br.Discard(1)
			}
		}
		r.line = line
		return r.trimBOM(line), nil
	}
}

func (r *Reader) trimBOM(line []byte) []byte {
	if r.first {
		r.first = false
		line = bytes.TrimPrefix(line, []byte("\ufeff"))
	}
	return line
}

// WriteEvent writes one event: its id and type when set, then each line of
// data as its own data field, then the blank line that dispatches it.
func WriteEvent(w io.Writer, id, typ string, data []byte) error {
	var b strings.Builder
	if id != "" {
		if strings.ContainsAny(id, "\r\n\x00") {
			return fmt.Errorf("sse: invalid event id %q", id)
		}
		b.WriteString("id: " + id + "\n")
	}
	if typ != "" {
		if strings.ContainsAny(typ, "\r\n") {
			return fmt.Errorf("sse: invalid event type %q", typ)
		}
		b.WriteString("event: " + typ + "\n")
	}
	for _, l := range splitLines(data) {
		b.WriteString("data: ")
		b.Write(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRetry writes a priming event that sets an id and the retry delay.
func WriteRetry(w io.Writer, id string, retry time.Duration) error {
	s := "retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n"
	if id != "" {
		s = "id: " + id + "\n" + s
	}
	_, err := io.WriteString(w, s+"data: \n\n")
	return err
}

// WriteComment writes a comment line, which keeps a connection alive.
func WriteComment(w io.Writer, text string) error {
	_, err := io.WriteString(w, ": "+strings.NewReplacer("\r", " ", "\n", " ").Replace(text)+"\n\n")
	return err
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			out = append(out, data[start:i])
			start = i + 1
		case '\r':
			out = append(out, data[start:i])
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	return append(out, data[start:])
}
