package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"mcpx/internal/demo"
)

// tagOf returns a request event's startOpts.tag, "" if it has none.
func tagOf(e *demo.Event) string {
	if len(e.Meta) == 0 {
		return ""
	}
	var m map[string]json.RawMessage
	var tag string
	if json.Unmarshal(e.Meta, &m) != nil || json.Unmarshal(m[tagKey], &tag) != nil {
		return ""
	}
	return tag
}

// at is when the upstream saw e, by its own clock (await passes over an
// event whose time does not parse).
func at(e *demo.Event) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, e.At)
	return t
}

// startWait starts the demo's wait tool on p for seconds, its request
// tagged afresh (prefix and a number), and returns the call and the
// upstream's record of its request. p's tail opens on first use and moves
// past what was recorded before, so that the events after it are this
// call's or later.
func (p *path) startWait(prefix, seconds string) (*call, *demo.Event, error) {
	if p.tail == nil {
		t, err := openTail(p.record)
		if err != nil {
			return nil, nil, err
		}
		p.tail = t
	}
	p.tail.skip()
	tag := prefix + strconv.FormatInt(seq.Add(1), 10)
	c, err := p.h.start(p.tool("wait"), []byte(`{"seconds":`+seconds+`,"text":"`+tag+`"}`), startOpts{tag: tag})
	if err != nil {
		return nil, nil, err
	}
	req, err := p.tail.await(func(e *demo.Event) bool { return e.Event == demo.EventRequest && tagOf(e) == tag }, 10*time.Second)
	if err != nil {
		c.abandon()
		return nil, nil, fmt.Errorf("the upstream never got the call: %w", err)
	}
	return c, req, nil
}

// recordTail reads a record file as the upstream appends to it.
type recordTail struct {
	path string
	f    *os.File
	rest []byte // a line not yet complete
}

// openTail opens path (creating it if the upstream has not yet) at its end.
func openTail(path string) (*recordTail, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return &recordTail{path: path, f: f}, nil
}

// pollEvery is how often a tail looks for new lines. It bounds how long the
// bench takes to notice an event, not what is measured: events carry the
// upstream's own timestamps.
const pollEvery = 500 * time.Microsecond

// skip moves past everything recorded so far.
func (t *recordTail) skip() {
	_, _ = t.f.Seek(0, io.SeekEnd)
	t.rest = t.rest[:0]
}

// await returns the next event for which match is true, within timeout.
func (t *recordTail) await(match func(*demo.Event) bool, timeout time.Duration) (*demo.Event, error) {
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 32<<10)
	for {
		for {
			i := bytes.IndexByte(t.rest, '\n')
			if i < 0 {
				break
			}
			line := t.rest[:i]
			var e demo.Event
			ok := json.Unmarshal(line, &e) == nil && !at(&e).IsZero() && match(&e)
			t.rest = append(t.rest[:0], t.rest[i+1:]...)
			if ok {
				return &e, nil
			}
		}
		n, _ := t.f.Read(buf)
		if n > 0 {
			t.rest = append(t.rest, buf[:n]...)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no matching event in %s within %s", t.path, timeout)
		}
		time.Sleep(pollEvery)
	}
}

func (t *recordTail) close() { t.f.Close() }
