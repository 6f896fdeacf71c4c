package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// event is a line of the demo's record file (-record): what the upstream
// saw and when, by its own clock.
type event struct {
	Event     string          `json:"event"`
	ID        json.RawMessage `json:"id"`
	RequestID json.RawMessage `json:"requestId"`
	Tool      string          `json:"tool"`
	Reason    string          `json:"reason"`
	Known     *bool           `json:"known"`
	Meta      json.RawMessage `json:"meta"`
	At        time.Time       `json:"at"`
}

// tag returns the request's startOpts.tag, "" if it has none.
func (e *event) tag() string {
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
func (t *recordTail) await(match func(*event) bool, timeout time.Duration) (*event, error) {
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 32<<10)
	for {
		for {
			i := bytes.IndexByte(t.rest, '\n')
			if i < 0 {
				break
			}
			line := t.rest[:i]
			var e event
			ok := json.Unmarshal(line, &e) == nil && match(&e)
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
