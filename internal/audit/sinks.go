package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"mcpx/internal/principal"
)

// Refused records a refusal of the policy's (principal.Auditor).
func (l *Log) Refused(who principal.Principal, t principal.Target, ref *principal.Refusal) {
	if l == nil {
		return
	}
	r := Record{Kind: KindRefusal, Action: ref.Op.String(), Server: t.Server, Tool: t.Tool, Outcome: "refused", Detail: ref.Why}
	if ref.Hidden {
		r.Outcome = "hidden"
	}
	r.Who(who)
	switch ref.Op {
	case principal.ReadJob, principal.CancelJob:
		r.Job = t.ID
	}
	l.Add(r)
}

// File is a sink of JSON lines: a file opened for appending (mode 0600),
// or a writer such as standard output.
type File struct {
	path string // "" for a writer
	mu   sync.Mutex
	w    io.Writer
	f    *os.File
	buf  bytes.Buffer
}

// OpenFile opens path for appending ("-": standard output).
func OpenFile(path string) (*File, error) {
	if path == "-" {
		return &File{w: os.Stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	return &File{path: path, w: f, f: f}, nil
}

// NewWriter is a sink of JSON lines on w.
func NewWriter(w io.Writer) *File { return &File{w: w} }

func (s *File) Name() string {
	if s.path == "" {
		return "standard output"
	}
	return s.path
}

// Write appends one line per record in one write. After a failed write
// the file is opened again (it may have been rotated, or mended).
func (s *File) Write(_ context.Context, recs []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	if s.w == nil {
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		s.w, s.f = f, f
	}
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		if s.f != nil {
			s.f.Close()
			s.w, s.f = nil, nil
		}
		return err
	}
	return nil
}

// Close closes the file.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.w, s.f = nil, nil
	return err
}

// LazyFile is a sink of JSON lines appended to path, opened at its
// first write (and again after a failed one).
func LazyFile(path string) *File { return &File{path: path} }
