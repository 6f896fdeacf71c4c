package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// progressClock is a manual clock for progressBar tests.
type progressClock struct{ t time.Time }

func (c *progressClock) now() time.Time          { return c.t }
func (c *progressClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestProgressBar(tty bool, width int) (*progressBar, *strings.Builder, *progressClock) {
	clk := &progressClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var out strings.Builder
	return newProgressBar(&out, tty, width, "echo", clk.now), &out, clk
}

func ptr(v float64) *float64 { return &v }

func TestProgressTTYGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		width    int
		update   func(b *progressBar)
		elapsed  time.Duration
		want     string
		wantCols int // 0: not checked
	}{
		{"before progress", 80, nil, 1200 * time.Millisecond,
			"⠹ waiting for echo  1.2s", 0},
		{"with total", 80, func(b *progressBar) { b.Update(45, ptr(100), "exporting part 9 of 20") }, 12300 * time.Millisecond,
			"[=========>          ]  45/100  45%  exporting part 9 of 20  12.3s", 0},
		{"zero of total", 80, func(b *progressBar) { b.Update(0, ptr(3), "") }, 0,
			"[>                   ]  0/3  0%  0.0s", 0},
		{"done", 80, func(b *progressBar) { b.Update(2.5, ptr(2.5), "ok") }, 61 * time.Second,
			"[====================]  2.5/2.5  100%  ok  1m1s", 0},
		{"over total", 80, func(b *progressBar) { b.Update(7, ptr(5), "") }, time.Second,
			"[====================]  7/5  100%  1.0s", 0},
		{"without total", 80, func(b *progressBar) { b.Update(37, nil, "scanned 37 files") }, 4100 * time.Millisecond,
			"⠙ 37  scanned 37 files  4.1s", 0},
		{"zero total is no total", 80, func(b *progressBar) { b.Update(0.1+0.2, ptr(0), "") }, 0,
			"⠋ 0.3  0.0s", 0},
		{"control characters", 80, func(b *progressBar) { b.Update(1, nil, "a\nb\x1b[2Jc\td") }, 0,
			"⠋ 1  a b [2Jc d  0.0s", 0},
		{"truncated message", 30, func(b *progressBar) { b.Update(1, nil, "résumé of héllo wörld and more") }, time.Second,
			"⠋ 1  résumé of héllo w…  1.0s", 29},
		{"truncated wide runes", 30, func(b *progressBar) { b.Update(1, nil, "日本語のファイルを読んでいます") }, time.Second,
			"⠋ 1  日本語のファイル…  1.0s", 28},
		{"truncated label", 20, func(b *progressBar) { b.label = "a-tool-with-a-long-name" }, time.Second,
			"⠋ waiting fo…  1.0s", 19},
		{"no room for message", 40, func(b *progressBar) { b.Update(45, ptr(100), "exporting") }, 0,
			"[=========>          ]  45/100  45%", 35},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, out, clk := newTestProgressBar(true, tc.width)
			if tc.update != nil {
				tc.update(b)
			}
			clk.advance(tc.elapsed)
			b.Tick()
			if got, want := out.String(), "\r"+tc.want+"\x1b[K"; got != want {
				t.Errorf("drew\n%q\nwant\n%q", got, want)
			}
			if tc.wantCols != 0 && progressWidth(tc.want) != tc.wantCols {
				t.Errorf("golden line is %d columns, want %d", progressWidth(tc.want), tc.wantCols)
			}
		})
	}
}

func TestProgressNeverWiderThanTerminal(t *testing.T) {
	for width := 1; width <= 90; width++ {
		for _, msg := range []string{"", "plain ascii message of some length", "日本語のファイル🙂 é́ combining"} {
			b, out, clk := newTestProgressBar(true, width)
			b.label = msg
			clk.advance(3 * time.Second)
			b.Tick()
			for _, total := range []*float64{nil, ptr(1e6)} {
				b.Update(123456.789, total, msg)
				b.Tick()
			}
			for _, line := range strings.Split(out.String(), "\r")[1:] {
				line = strings.TrimSuffix(line, "\x1b[K")
				if w := progressWidth(line); w >= width && w > 0 {
					t.Fatalf("width %d: drew %q, %d columns", width, line, w)
				}
			}
		}
	}
}

func TestProgressTTYRedrawAndFinish(t *testing.T) {
	b, out, _ := newTestProgressBar(true, 80)
	b.Finish()
	if out.Len() != 0 {
		t.Errorf("Finish with nothing drawn wrote %q", out.String())
	}

	b, out, clk := newTestProgressBar(true, 80)
	b.Update(1, ptr(4), "")
	b.Tick()
	b.Tick() // same line: not redrawn
	clk.advance(100 * time.Millisecond)
	b.Tick()
	b.Finish()
	b.Tick()
	b.Update(2, ptr(4), "")
	b.Finish()
	want := "\r[=====>              ]  1/4  25%  0.0s\x1b[K" +
		"\r[=====>              ]  1/4  25%  0.1s\x1b[K" +
		"\r\x1b[K"
	if got := out.String(); got != want {
		t.Errorf("wrote\n%q\nwant\n%q", got, want)
	}
}

func TestProgressPlainThrottled(t *testing.T) {
	b, out, clk := newTestProgressBar(false, 80)
	step := func(d time.Duration, update func()) {
		clk.advance(d)
		if update != nil {
			update()
		}
		b.Tick()
	}
	step(500*time.Millisecond, nil) // no progress yet: nothing to print
	step(0, func() { b.Update(1, ptr(20), "part 1") })
	step(300*time.Millisecond, func() { b.Update(2, ptr(20), "part 2") }) // held back
	step(300*time.Millisecond, func() { b.Update(3, ptr(20), "part 3") }) // held back
	step(400*time.Millisecond, nil)                                       // a second since the last: prints part 3
	step(2*time.Second, nil)                                              // nothing new
	step(0, func() { b.Update(3, ptr(20), "part 3") })                    // same as printed
	step(0, func() { b.Update(4.5, nil, "") })                            // prints at once
	step(100*time.Millisecond, func() { b.Update(5, nil, "almost") })     // held back
	b.Finish()                                                            // prints it
	b.Finish()
	b.Tick()
	want := "progress 1/20 (5%) part 1 [0.5s]\n" +
		"progress 3/20 (15%) part 3 [1.5s]\n" +
		"progress 4.5 [3.5s]\n" +
		"progress 5 almost [3.6s]\n"
	if got := out.String(); got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Error("plain output contains a carriage return or an escape")
	}
}

func TestProgressNumber(t *testing.T) {
	for v, want := range map[float64]string{
		45: "45", 2.5: "2.5", 0.1 + 0.2: "0.3", 1.0 / 3: "0.33", 1234567: "1234567",
		-0.001: "0", 1e21: "1e+21",
	} {
		if got := progressNumber(v); got != want {
			t.Errorf("progressNumber(%v) = %q, want %q", v, got, want)
		}
	}
	if got := progressPercent(29, 100); got != 29 {
		t.Errorf("progressPercent(29, 100) = %d, want 29", got)
	}
}

func TestProgressConcurrentUse(t *testing.T) {
	b, _, _ := newTestProgressBar(true, 80)
	b.now = time.Now
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 200 {
			b.Update(float64(i), ptr(200), "x")
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			b.Tick()
		}
	}()
	wg.Wait()
	b.Finish()
}

func TestProgressTerminalWidthNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w, tty := terminalWidth(f); w != 80 || tty {
		t.Errorf("terminalWidth(regular file) = %d, %v; want 80, false", w, tty)
	}
}
