package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Limits on arguments, so that a typo cannot wedge a test for a day.
const (
	maxSeconds = 24 * 60 * 60
	maxSteps   = 1_000_000
)

// pacing is the arguments of a tool that works in steps over some seconds.
type pacing struct {
	Seconds float64 `json:"seconds"`
	Steps   int     `json:"steps"`
}

func (p *pacing) check() error {
	if err := checkSeconds("seconds", p.Seconds); err != nil {
		return err
	}
	if p.Steps < 1 || p.Steps > maxSteps {
		return fmt.Errorf("steps must be between 1 and %d, not %d", maxSteps, p.Steps)
	}
	return nil
}

// interval is the time between two steps.
func (p *pacing) interval() time.Duration { return seconds(p.Seconds) / time.Duration(p.Steps) }

func checkSeconds(name string, s float64) error {
	if s < 0 || s > maxSeconds {
		return fmt.Errorf("%s must be between 0 and %d, not %g", name, maxSeconds, s)
	}
	return nil
}

type exportArgs struct {
	pacing
	Records int64 `json:"records"`
}

func (a *exportArgs) check() error {
	if a.Records < 0 || a.Records > 1e12 {
		return fmt.Errorf("records must be between 0 and 1e12, not %d", a.Records)
	}
	return a.pacing.check()
}

// runExport reports part i of N, then works on it for seconds/N.
func runExport(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := exportArgs{pacing{Seconds: 4, Steps: 20}, 1000}
	if err := t.decode(&a); err != nil {
		return errorResult("export: invalid arguments: %v", err), nil
	}
	n := int64(a.Steps)
	for i := int64(1); i <= n; i++ {
		t.progress.report(float64(i), float64(n), fmt.Sprintf("exporting part %d of %d (%d records)", i, n, a.Records*i/n))
		if err := sleep(ctx, a.interval()); err != nil {
			return nil, err
		}
	}
	text := fmt.Sprintf("exported %d records in %d parts", a.Records, n)
	return toolResult(text, marshal(struct {
		Records int64 `json:"records"`
		Parts   int64 `json:"parts"`
	}{a.Records, n}), false), nil
}

// runScan counts files with no known total: 7 files a step.
func runScan(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := pacing{Seconds: 3, Steps: 10}
	if err := t.decode(&a); err != nil {
		return errorResult("scan: invalid arguments: %v", err), nil
	}
	for i := 1; i <= a.Steps; i++ {
		if err := sleep(ctx, a.interval()); err != nil {
			return nil, err
		}
		t.progress.report(float64(7*i), 0, fmt.Sprintf("scanned %d files", 7*i))
	}
	return textResult(fmt.Sprintf("scanned %d files", 7*a.Steps)), nil
}

// runStubborn ignores cancellation: its context ends only when Serve stops.
func runStubborn(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := pacing{Seconds: 2, Steps: 4}
	if err := t.decode(&a); err != nil {
		return errorResult("stubborn: invalid arguments: %v", err), nil
	}
	for i := 1; i <= a.Steps; i++ {
		if err := sleep(ctx, a.interval()); err != nil {
			return nil, err
		}
		t.progress.report(float64(i), float64(a.Steps), fmt.Sprintf("still working (%d of %d), cancelled or not", i, a.Steps))
	}
	text := fmt.Sprintf("stubborn finished all %d steps", a.Steps)
	if t.c.wasCancelled() {
		text += " although it was cancelled"
	}
	return textResult(text), nil
}

type waitArgs struct {
	Seconds float64 `json:"seconds"`
	Text    string  `json:"text"`
}

func (a *waitArgs) check() error { return checkSeconds("seconds", a.Seconds) }

// runWait waits silently: no progress.
func runWait(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := waitArgs{Seconds: 30}
	if err := t.decode(&a); err != nil {
		return errorResult("wait: invalid arguments: %v", err), nil
	}
	if err := sleep(ctx, seconds(a.Seconds)); err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("waited %g seconds", a.Seconds)), nil
}

type sleepThenArgs struct {
	waitArgs
	Gate string `json:"gate"`
}

// runSleepThen waits silently, then returns its text argument. With a
// gate (a file path), it waits for the file to exist instead, at most
// seconds: a test opens the gate once it has seen the call running.
func runSleepThen(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := sleepThenArgs{waitArgs: waitArgs{Seconds: 1, Text: "done"}}
	if err := t.decode(&a); err != nil {
		return errorResult("sleep_then: invalid arguments: %v", err), nil
	}
	if a.Gate == "" {
		if err := sleep(ctx, seconds(a.Seconds)); err != nil {
			return nil, err
		}
		return textResult(a.Text), nil
	}
	deadline := time.Now().Add(seconds(a.Seconds))
	for {
		if _, err := os.Stat(a.Gate); err == nil {
			return textResult(a.Text), nil
		}
		if time.Now().After(deadline) {
			return errorResult("sleep_then: the gate %s did not open within %g seconds", a.Gate, a.Seconds), nil
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

type burstArgs struct {
	Count int `json:"count"`
}

func (a *burstArgs) check() error {
	if a.Count < 0 || a.Count > maxSteps {
		return fmt.Errorf("count must be between 0 and %d, not %d", maxSteps, a.Count)
	}
	return nil
}

// runBurst sends its progress back to back; "sent N" counts what went out.
func runBurst(ctx context.Context, t *toolCall) (json.RawMessage, error) {
	a := burstArgs{Count: 200}
	if err := t.decode(&a); err != nil {
		return errorResult("burst: invalid arguments: %v", err), nil
	}
	for i := 1; i <= a.Count; i++ {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		t.progress.report(float64(i), float64(a.Count), fmt.Sprintf("step %d", i))
	}
	return textResult(fmt.Sprintf("sent %d", t.progress.sent)), nil
}
