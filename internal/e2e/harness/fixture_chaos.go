package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The chaos fixtures (hostile/chaos_test.go, daemon/orphans_test.go):
// upstreams that flood, hang, or leave processes behind. RunFixture calls
// ChaosStart before serving and ChaosCall for each tools/call.
//
//	family        spawns a child in its group, one that leaves its session
//	              (setsid) and an orphan (double fork); a call with
//	              {"seconds": s} sends one progress, then answers after s.
//	progressflood a call with {"count": n, "rate": r} sends n progress
//	              notifications (1..n of n) at r a second, then answers
//	              "sent n in <duration>".
//	stderrflood   writes 200-byte lines to stderr as fast as it can, in
//	              64 KB writes, from its start; a call answers at once
//	              with the bytes written so far.
//	hang          a call with {"hang": true} is never answered; any other
//	              is answered at once.
//	asker         a call with {"count": n} sends the host n elicitation
//	              requests at once (with "serial": true, each once the
//	              last is answered), and answers once all are answered.
//	garbage       a call with {"count": n} writes n lines that are not
//	              JSON to stdout, then answers "wrote n".
//	crashloop     appends "start <unix ns>" to the file $MCPX_E2E_STARTS,
//	              serves for crashAfter, then appends "exit <unix ns>"
//	              and exits with status 3.

// AskerCall is the asker fixture's call: how many answers it waits for,
// and how it answers the call.
type AskerCall struct {
	want, got int
	refused   bool
	serial    bool // the next question once the last is answered
	reply     func(any)
	send      func(any)
}

func (c *AskerCall) ask(i int) {
	c.send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("ask-", i), "method": "elicitation/create",
		"params": map[string]any{"mode": "form", "message": fmt.Sprint("question ", i),
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}})
}

var Asker atomic.Pointer[AskerCall]

// AskerAnswered takes a response to one of the asker's questions (on the
// fixture's only reader goroutine); the first refusal goes to stderr,
// which mcpx logs.
func AskerAnswered(line []byte) {
	c := Asker.Load()
	if c == nil {
		return
	}
	var resp struct {
		Error *struct{ Message string } `json:"error"`
	}
	_ = json.Unmarshal(line, &resp)
	if resp.Error != nil && !c.refused {
		c.refused = true
		fmt.Fprintln(os.Stderr, "asker: a question was refused: "+resp.Error.Message)
	}
	if c.got++; c.serial && c.got < c.want {
		c.ask(c.got)
	}
	if c.got == c.want {
		c.reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint("all ", c.want, " answered")}}})
	}
}

// StderrBytes counts what stderrflood has written.
var StderrBytes atomic.Int64

// StartsEnv names the file the crashloop fixture logs its life to.
const StartsEnv = "MCPX_E2E_STARTS"

// CrashAfter is how long the crashloop fixture lives.
const CrashAfter = 700 * time.Millisecond

func ChaosStart(name string) {
	switch name {
	case "crashloop":
		logLife := func(what string) {
			f, err := os.OpenFile(os.Getenv(StartsEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintf(f, "%s %d\n", what, time.Now().UnixNano())
				f.Close()
			}
		}
		logLife("start")
		go func() {
			time.Sleep(CrashAfter)
			logLife("exit")
			os.Exit(3)
		}()
	case "family":
		// A child in the fixture's group and session.
		_ = exec.Command("sleep", "1000").Start()
		// One that leaves them.
		c := exec.Command("sleep", "1001")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		_ = c.Start()
		// An orphan: its parent exits at once.
		_ = exec.Command("sh", "-c", "sleep 1002 &").Run()
		// One that leaves its session, is orphaned and clears its
		// environment: only its arguments say whose it is.
		esc := exec.Command("sh", "-c", "sleep 1004 "+EscapeeMark(os.Getenv(OrphanTagEnv))+" &")
		esc.Env = []string{}
		esc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		_ = esc.Run()
	case "stderrflood":
		go func() {
			line := strings.Repeat("x", 199) + "\n"
			chunk := []byte(strings.Repeat(line, (64<<10)/len(line)))
			for {
				n, err := os.Stderr.Write(chunk)
				StderrBytes.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
	}
}

// ChaosCall answers a tools/call of the chaos fixtures, and reports
// whether name is one.
func ChaosCall(name string, token, args json.RawMessage, send func(any), reply func(any)) bool {
	var a struct {
		Seconds float64 `json:"seconds"`
		Count   int     `json:"count"`
		Rate    int     `json:"rate"`
		Hang    bool    `json:"hang"`
		Serial  bool    `json:"serial"`
	}
	_ = json.Unmarshal(args, &a)
	text := func(s string) any { return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}} }
	progress := func(v, total float64) {
		send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
			"params": map[string]any{"progressToken": token, "progress": v, "total": total}})
	}
	switch name {
	case "family":
		if token != nil {
			progress(1, 2)
		}
		go func() {
			time.Sleep(time.Duration(a.Seconds * float64(time.Second)))
			reply(text("done"))
		}()
	case "progressflood":
		start := time.Now()
		for i := 1; i <= a.Count; i++ {
			progress(float64(i), float64(a.Count))
			if a.Rate > 0 {
				// Paced by the clock, in bursts of one millisecond's worth.
				if ahead := time.Duration(i)*time.Second/time.Duration(a.Rate) - time.Since(start); ahead > time.Millisecond {
					time.Sleep(ahead)
				}
			}
		}
		reply(text(fmt.Sprintf("sent %d in %s", a.Count, time.Since(start).Round(time.Millisecond))))
	case "stderrflood":
		reply(text(fmt.Sprint(StderrBytes.Load())))
	case "asker":
		// Count elicitation/create requests to the host at once, without
		// waiting for answers; the call is answered once all are.
		c := &AskerCall{want: a.Count, reply: reply, serial: a.Serial, send: send}
		Asker.Store(c)
		if a.Serial {
			c.ask(0)
			break
		}
		for i := range a.Count {
			c.ask(i)
		}
	case "garbage":
		// Count lines that are not JSON on stdout, then the answer (the
		// fixture writes nothing else meanwhile: no goroutine of its own).
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		for i := range a.Count {
			fmt.Fprintf(w, "garbage line %d: not json at all\n", i)
		}
		w.Flush()
		reply(text("wrote " + fmt.Sprint(a.Count)))
	case "hang":
		if !a.Hang {
			reply(text("ok"))
		}
	default:
		return false
	}
	return true
}
