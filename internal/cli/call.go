package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/localclient"
)

func cmdCall() *command {
	var (
		configPath  string
		rawJSON     bool
		quiet       bool
		background  bool
		timeout     time.Duration
		idleTimeout time.Duration
	)
	return &command{
		name:  "call",
		usage: "[flags] SERVER.TOOL ['{json arguments}' | -]",
		short: "call a tool, showing its progress",
		long: `
Call runs one tool through the mcpx daemon (started if needed) and prints its
result on stdout, its progress on stderr. The tool is SERVER.TOOL, or a name
as "mcpx tools" shows it. Arguments are a JSON object, or - to read them from
stdin; none means {}.

Ctrl-C cancels the call upstream with the reason "interrupted by user".
--timeout and --idle-timeout can only shorten the configured timeouts.

--background starts the call as a job and prints its id at once
({"job_id": ...} with --json); "mcpx jobs" shows it, waits for it or
cancels it. The same call started again while the job runs gets the same
job.

Exit status: 0 ok, 1 the tool reported an error, 2 usage, 3 transport,
daemon or timeout, 130 interrupted.`,
		setFlags: func(fs *flag.FlagSet) {
			configFlag(fs, &configPath)
			fs.BoolVar(&rawJSON, "json", false, "print the raw result JSON")
			fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
			fs.BoolVar(&background, "background", false, "start the call as a job and print its id")
			fs.DurationVar(&timeout, "timeout", 0, "hard maximum for this call")
			fs.DurationVar(&idleTimeout, "idle-timeout", 0, "end the call after this long without progress")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("want a tool and optionally its arguments")
			}
			req := apitype.CallRequest{Tool: args[0], IdleTimeoutMs: idleTimeout.Milliseconds(), MaxTimeoutMs: timeout.Milliseconds()}
			if len(args) == 2 {
				raw := []byte(args[1])
				if args[1] == "-" {
					b, err := io.ReadAll(env.Stdin)
					if err != nil {
						return fmt.Errorf("reading arguments: %w", err)
					}
					raw = b
				}
				raw = bytes.TrimSpace(raw)
				if err := argumentsObject(raw); err != nil {
					return &exitError{ExitUsage, err}
				}
				req.Arguments = raw
			}
			if timeout < 0 || idleTimeout < 0 {
				return usagef("--timeout and --idle-timeout must not be negative")
			}
			c, err := connectTo(ctx, env, configPath)
			if err != nil {
				return err
			}
			if background {
				return startJob(ctx, env, c, req, rawJSON)
			}
			call := func(ctx context.Context, onEvent func(apitype.CallEvent)) (*apitype.CallEvent, error) {
				return c.Call(ctx, req, onEvent)
			}
			return runCall(ctx, env, c, req.Tool, call, rawJSON, quiet)
		},
	}
}

// argumentsObject says what is wrong with arguments that are not one
// JSON object, with the parse error and where it is.
func argumentsObject(raw []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = fmt.Errorf("more after the object at byte %d", dec.InputOffset())
	}
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("arguments are not valid JSON: %v (at byte %d of %d)", err, syn.Offset, len(raw))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("arguments are not valid JSON: it ends early (%d bytes)", len(raw))
	case err != nil:
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object, as '{\"name\": \"value\"}'")
	}
	return nil
}

// runCall streams one call (or script), labelled label on the progress
// bar. On ctx's end (Ctrl-C) it asks the daemon to cancel the call as a
// person's interrupt and waits briefly for the end.
func runCall(ctx context.Context, env *Env, c *localclient.Client, label string,
	call func(context.Context, func(apitype.CallEvent)) (*apitype.CallEvent, error), rawJSON, quiet bool) error {
	tty, width := false, 80
	if f, ok := env.Stderr.(*os.File); ok {
		width, tty = terminalWidth(f)
	}
	var bar *progressBar
	if !quiet {
		bar = newProgressBar(env.Stderr, tty, width, label, nil)
	}
	// The stream lives on a context of its own: on Ctrl-C the call is
	// cancelled by request, and the stream carries the outcome back.
	streamCtx, closeStream := context.WithCancel(context.WithoutCancel(ctx))
	defer closeStream()
	var (
		mu      sync.Mutex
		callID  uint64
		grace   *time.Timer
		pending bool // Ctrl-C came before the daemon named the call
	)
	// cancel asks the daemon to cancel call id for the user, and closes
	// the stream if that fails or no outcome comes within a grace.
	cancel := func(id uint64) {
		cctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.Cancel(cctx, id, "user")
		stop()
		if err != nil {
			closeStream()
			return
		}
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		grace = time.AfterFunc(3*time.Second, closeStream)
		mu.Unlock()
	}
	defer func() {
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
	}()
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		wg.Wait()
	}()
	wg.Add(1)
	go func() { // ticker for the bar, and the interrupt
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		interrupted := ctx.Done()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if bar != nil {
					bar.Tick()
				}
			case <-interrupted:
				interrupted = nil
				mu.Lock()
				id := callID
				if id == 0 {
					// The call is under way but its id not read yet: it is
					// cancelled for the user when it comes; closing the
					// stream would tell the daemon the client left.
					pending = true
					grace = time.AfterFunc(3*time.Second, closeStream)
				}
				mu.Unlock()
				if id != 0 {
					cancel(id)
				}
			}
		}
	}()
	final, err := call(streamCtx, func(ev apitype.CallEvent) {
		switch ev.Type {
		case "started":
			mu.Lock()
			callID = ev.CallID
			cancelNow := pending
			pending = false
			mu.Unlock()
			if cancelNow {
				cancel(ev.CallID)
			}
		case "progress":
			if bar != nil && ev.Progress != nil {
				bar.Update(ev.Progress.Progress, ev.Progress.Total, ev.Progress.Message)
				bar.Tick()
			}
		}
	})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{ExitInterrupted, errors.New("interrupted")}
		}
		var de *localclient.DaemonError
		if errors.As(err, &de) && (de.Status == 404 || de.Status == 400) {
			return &exitError{ExitUsage, err}
		}
		return err
	}
	if final.Type == "error" {
		return callFailure(final.Error, isTerminal(env.Stderr))
	}
	out := resultWriter{w: env.Stdout, tty: isTerminal(env.Stdout)}
	if rawJSON {
		out.print(string(bytes.TrimSpace(final.Result)) + "\n")
	} else {
		printResult(out, final.Result)
	}
	if final.IsError {
		return &exitError{ExitToolError, errSilent}
	}
	return nil
}

// callFailure maps a failed call to its exit code; tty says the message
// goes to a terminal.
func callFailure(e *apitype.CallError, tty bool) error {
	if tty {
		c := *e
		c.Message = terminalSafe(c.Message, false)
		e = &c
	}
	err := errors.New(strings.TrimPrefix(e.Message, "mcpx: "))
	switch code := apitype.ExitCodeOf(e.Kind); code {
	case ExitToolError:
		return &exitError{code, fmt.Errorf("the upstream answered with error %d: %s", e.Code, e.Message)}
	default:
		return &exitError{code, err}
	}
}

// resultWriter writes what an upstream sent (a result, a script's
// console) to stdout: on a terminal through terminalSafe, else exactly.
type resultWriter struct {
	w   io.Writer
	tty bool
}

func (r resultWriter) print(s string) {
	if r.tty {
		s = terminalSafe(s, true)
	}
	io.WriteString(r.w, s)
}

func (r resultWriter) printf(format string, args ...any) { r.print(fmt.Sprintf(format, args...)) }

// printResult prints a tool result for a person: text as text, other
// content as a one-line summary, structured content when there is no text.
func printResult(w resultWriter, raw json.RawMessage) {
	var res struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
			URI      string `json:"uri"`
			Resource *struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"resource"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(raw, &res) != nil {
		w.printf("%s\n", raw)
		return
	}
	texts := 0
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			texts++
			w.print(strings.TrimRight(c.Text, "\n") + "\n")
		case "image", "audio":
			w.printf("[%s %s, %d bytes base64]\n", c.Type, c.MimeType, len(c.Data))
		case "resource":
			if c.Resource != nil && c.Resource.Text != "" {
				texts++
				w.print(strings.TrimRight(c.Resource.Text, "\n") + "\n")
			} else if c.Resource != nil {
				w.printf("[resource %s]\n", c.Resource.URI)
			}
		case "resource_link":
			w.printf("[link %s]\n", c.URI)
		default:
			w.printf("[%s content]\n", c.Type)
		}
	}
	if texts == 0 && len(res.Structured) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, res.Structured, "", "  ") == nil {
			w.print(buf.String() + "\n")
		}
	}
}
