package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/term"
)

const (
	progressBarCells = 20                     // inside the [ ] of the bar
	progressSpinStep = 100 * time.Millisecond // per spinner frame
	progressPlainGap = time.Second            // between plain lines off a TTY
)

var progressSpinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// progressBar shows the progress of one call on w: redrawn in place on a
// terminal, as throttled plain lines elsewhere. Update records, Tick draws,
// Finish clears; after Finish it writes nothing. Safe for concurrent use.
type progressBar struct {
	w     io.Writer
	tty   bool
	width int
	label string
	now   func() time.Time
	start time.Time

	mu        sync.Mutex
	seen      bool      // guarded by mu: an update has arrived
	progress  float64   // guarded by mu
	total     float64   // guarded by mu; meaningful when > 0
	message   string    // guarded by mu; sanitized
	dirty     bool      // guarded by mu: off a TTY, an update not yet printed
	lastPrint time.Time // guarded by mu: off a TTY, when a line was printed
	drawn     string    // guarded by mu: on a TTY, the line on screen
	finished  bool      // guarded by mu
}

// newProgressBar returns a bar for the call of label (a tool name, say)
// that writes to w. width is the terminal's width in columns (<= 0 means
// 80); now is the clock (nil means time.Now).
func newProgressBar(w io.Writer, tty bool, width int, label string, now func() time.Time) *progressBar {
	if width <= 0 {
		width = 80
	}
	if now == nil {
		now = time.Now
	}
	return &progressBar{w: w, tty: tty, width: width, label: progressSanitize(label), now: now, start: now()}
}

// Update records the latest progress. total is nil, or not positive, when
// the amount of work is unknown.
func (b *progressBar) Update(progress float64, total *float64, message string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := 0.0
	if total != nil && *total > 0 && !math.IsInf(*total, 0) {
		t = *total
	}
	message = progressSanitize(message)
	if b.seen && progress == b.progress && t == b.total && message == b.message {
		return
	}
	b.seen, b.progress, b.total, b.message, b.dirty = true, progress, t, message, true
}

// Tick redraws the bar on a TTY; off a TTY it prints the latest update if
// it is new and the last line is at least a second old.
func (b *progressBar) Tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	now := b.now()
	if !b.tty {
		if b.dirty && (b.lastPrint.IsZero() || now.Sub(b.lastPrint) >= progressPlainGap) {
			b.printPlainLocked(now)
		}
		return
	}
	if line := b.renderLocked(now.Sub(b.start)); line != b.drawn {
		io.WriteString(b.w, "\r"+line+"\x1b[K")
		b.drawn = line
	}
}

// Finish clears the bar from a TTY so that what follows starts on a clean
// line; off a TTY it prints the last update if not yet printed.
func (b *progressBar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	if b.tty && b.drawn != "" {
		io.WriteString(b.w, "\r\x1b[K")
	}
	if !b.tty && b.dirty {
		b.printPlainLocked(b.now())
	}
}

func (b *progressBar) printPlainLocked(now time.Time) {
	s := "progress " + progressNumber(b.progress)
	if b.total > 0 {
		s += fmt.Sprintf("/%s (%d%%)", progressNumber(b.total), progressPercent(b.progress, b.total))
	}
	if b.message != "" {
		s += " " + b.message
	}
	fmt.Fprintf(b.w, "%s [%s]\n", s, progressElapsed(now.Sub(b.start)))
	b.dirty, b.lastPrint = false, now
}

// renderLocked returns the TTY line, at most width-1 columns wide so that
// the cursor never reaches the last column, where terminals differ.
func (b *progressBar) renderLocked(elapsed time.Duration) string {
	spin := string(progressSpinner[int(elapsed/progressSpinStep)%len(progressSpinner)])
	var head, msg string
	switch {
	case !b.seen:
		msg = strings.TrimSpace(spin + " waiting for " + b.label)
	case b.total > 0:
		pct := progressPercent(b.progress, b.total)
		cells := pct * progressBarCells / 100
		bar := strings.Repeat("=", cells)
		if cells < progressBarCells {
			bar += ">" + strings.Repeat(" ", progressBarCells-cells-1)
		}
		head = fmt.Sprintf("[%s]  %s/%s  %d%%", bar, progressNumber(b.progress), progressNumber(b.total), pct)
		msg = b.message
	default:
		head, msg = spin+" "+progressNumber(b.progress), b.message
	}
	// Columns go to the head first, then the elapsed time, then the message.
	tail, budget := progressElapsed(elapsed), b.width-1
	if head != "" && progressWidth(head)+2+progressWidth(tail) > budget {
		tail, msg = "", ""
	}
	room := budget - progressWidth(head) - progressWidth(tail)
	for _, p := range []string{head, tail} {
		if p != "" {
			room -= 2 // the separator before or after the message
		}
	}
	switch {
	case progressWidth(msg) <= room:
	case room >= 4: // three columns and an ellipsis, or nothing
		msg = progressTruncate(msg, room-1) + "…"
	default:
		msg = ""
	}
	var parts []string
	for _, p := range []string{head, msg, tail} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return progressTruncate(strings.Join(parts, "  "), budget)
}

// progressPercent is progress as a whole percentage of total, 0 to 100.
func progressPercent(progress, total float64) int {
	pct := math.Floor(progress * 100 / total)
	switch {
	case pct >= 100:
		return 100
	case pct > 0:
		return int(pct)
	}
	return 0 // also NaN
}

// progressNumber formats v compactly: 45, 2.5, 0.33.
func progressNumber(v float64) string {
	if math.Abs(v) >= 1e15 || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // not -0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func progressElapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// progressSanitize is terminalSafe for one line.
func progressSanitize(s string) string { return terminalSafe(s, false) }

// terminalSafe turns the control characters of s (C0, DEL and C1: ESC and
// CSI start the sequences that move the cursor, clear the screen, set the
// clipboard with OSC 52 or hide a link's target with OSC 8; BEL ends
// some), which a server could send to the user's terminal, into spaces.
// With lines, newlines and tabs are kept: a result's text has lines. It
// is what mcpx writes to a terminal of what it did not write itself;
// bytes for a pipe or a file stay as they are.
func terminalSafe(s string, lines bool) string {
	return strings.Map(func(r rune) rune {
		if lines && (r == '\n' || r == '\t') {
			return r
		}
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// progressRuneWidth is the number of terminal columns r takes: 0 for
// combining and format characters, 2 for East Asian wide ones and emoji.
func progressRuneWidth(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF && r != 0x303F,
		r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1F64F,
		r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}

func progressWidth(s string) int {
	n := 0
	for _, r := range s {
		n += progressRuneWidth(r)
	}
	return n
}

// progressTruncate returns the longest prefix of s at most cols columns wide.
func progressTruncate(s string, cols int) string {
	n := 0
	for i, r := range s {
		if n += progressRuneWidth(r); n > cols {
			return s[:i]
		}
	}
	return s
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth reports whether f is a terminal and its width in columns,
// 80 when it is not a terminal or its size is unknown.
func terminalWidth(f *os.File) (int, bool) {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return 80, false
	}
	if w, _, err := term.GetSize(fd); err == nil && w > 0 {
		return w, true
	}
	return 80, true
}
