package upstream

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// stderrLog reads an upstream's stderr: each line goes to the log, up to a
// rate, and the last few are kept for error messages and status, with the
// first few that name an error (a failing program's last lines are often
// the least useful: npm's "A complete log of this run…", Node's closing
// brace and version). Memory is bounded whatever the upstream writes.
type stderrLog struct {
	server string
	log    *slog.Logger

	mu    sync.Mutex
	tail  []string // ring of the last tailLines lines
	next  int
	total int64
	errs  []string // the first errLines lines that name an error
}

const (
	tailLines     = 8
	errLines      = 2
	maxLineBytes  = 1024
	logLinesPerS  = 50
	stderrBufSize = 64 << 10
)

func newStderrLog(server string, log *slog.Logger) *stderrLog {
	return &stderrLog{server: server, log: log, tail: make([]string, 0, tailLines)}
}

// run reads r until it ends.
func (s *stderrLog) run(r io.Reader) {
	br := bufio.NewReaderSize(r, stderrBufSize)
	window := time.Now()
	logged, suppressed := 0, 0
	for {
		if logged >= logLinesPerS && time.Since(window) < time.Second {
			// Over the rate until the window ends: count lines a buffer at
			// a time, keeping the tail, without a string per line.
			n, err := s.skim(br)
			suppressed += n
			if err != nil {
				if suppressed > 0 {
					s.log.Warn("upstream stderr lines not logged (rate limit)", "server", s.server, "count", suppressed)
				}
				return
			}
			continue
		}
		line, err := readBoundedLine(br, maxLineBytes)
		if line != "" {
			s.keep(line)
			if now := time.Now(); now.Sub(window) >= time.Second {
				if suppressed > 0 {
					s.log.Warn("upstream stderr lines not logged (rate limit)", "server", s.server, "count", suppressed)
				}
				window, logged, suppressed = now, 0, 0
			}
			if logged < logLinesPerS {
				s.log.Info("upstream stderr", "server", s.server, "line", line)
				logged++
			} else {
				suppressed++
			}
		}
		if err != nil {
			if suppressed > 0 {
				s.log.Warn("upstream stderr lines not logged (rate limit)", "server", s.server, "count", suppressed)
			}
			return
		}
	}
}

// skim consumes the whole lines br holds (waiting for some), keeping the
// last of them, and returns how many there were. A line longer than the
// buffer is dropped a buffer at a time, counted when it ends.
func (s *stderrLog) skim(br *bufio.Reader) (int, error) {
	if _, err := br.Peek(1); err != nil {
		return 0, err
	}
	buf, _ := br.Peek(br.Buffered())
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		if len(buf) == br.Size() {
			_, err := br.Discard(len(buf))
			return 0, err
		}
		_, err := br.Peek(len(buf) + 1) // wait for more
		return 0, err
	}
	lines := buf[:last]
	n := bytes.Count(lines, []byte{'\n'}) + 1
	// The last tailLines lines, newest first, then kept oldest first.
	var tail [tailLines][]byte
	kept, rest := 0, lines
	for kept < tailLines {
		i := bytes.LastIndexByte(rest, '\n')
		tail[kept] = rest[i+1:]
		kept++
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	for j := kept - 1; j >= 0; j-- {
		line := tail[j]
		if len(line) > maxLineBytes {
			line = line[:maxLineBytes]
		}
		s.keep(string(bytes.TrimRight(line, "\r")))
	}
	s.mu.Lock()
	s.total += int64(n - kept)
	s.mu.Unlock()
	_, err := br.Discard(last + 1)
	return n, err
}

// readBoundedLine reads one line, keeping at most n bytes of it.
func readBoundedLine(br *bufio.Reader, n int) (string, error) {
	var b strings.Builder
	for {
		chunk, isPrefix, err := br.ReadLine()
		if room := n - b.Len(); room > 0 {
			if len(chunk) > room {
				chunk = chunk[:room]
			}
			b.Write(chunk)
		}
		if err != nil || !isPrefix {
			return strings.TrimRight(b.String(), "\r"), err
		}
	}
}

func (s *stderrLog) keep(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	if len(s.errs) < errLines && namesError(line) {
		s.errs = append(s.errs, line)
	}
	if len(s.tail) < tailLines {
		s.tail = append(s.tail, line)
		return
	}
	s.tail[s.next] = line
	s.next = (s.next + 1) % tailLines
}

// errorWords are what a line that names an error says, in lower case.
var errorWords = []string{"error", "fatal", "panic", "exception", "cannot", "can't", "not found", "no such", "denied", "refused", "failed", "invalid", "missing"}

// namesError reports whether line looks like one that says what went wrong.
func namesError(line string) bool {
	l := strings.ToLower(line)
	for _, w := range errorWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// summary returns the first lines that named an error, then up to n of
// the most recent lines, oldest first, joined; a line in both is given
// once, and "…" marks lines left out between them.
func (s *stderrLog) summary(n int) string {
	last := s.lastLines(n)
	s.mu.Lock()
	errs := append([]string(nil), s.errs...)
	s.mu.Unlock()
	recent := strings.Split(last, " | ")
	var head []string
	for _, e := range errs {
		if !slices.Contains(recent, e) {
			head = append(head, e)
		}
	}
	if len(head) == 0 {
		return last
	}
	return strings.Join(head, " | ") + " | … | " + last
}

// lastLines returns up to n of the most recent lines, oldest first, joined.
func (s *stderrLog) lastLines(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ordered := append(append([]string(nil), s.tail[s.next:]...), s.tail[:s.next]...)
	if len(ordered) > n {
		ordered = ordered[len(ordered)-n:]
	}
	return strings.Join(ordered, " | ")
}
