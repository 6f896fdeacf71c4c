package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

func TsWriteJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TapLog is what tap.mjs logged.
type TapLog struct {
	Raw     string
	Entries []TapEntry
	Pids    []int
}

type TapEntry struct {
	at   float64 // ms since the epoch
	Dir  string  // "in": mcpx to the upstream; "out": the upstream to mcpx
	Line string
	Msg  struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
}

func ReadTapLog(t *testing.T, path string) *TapLog {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &TapLog{}
	}
	if err != nil {
		t.Fatal(err)
	}
	l := &TapLog{Raw: string(b)}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			At   float64 `json:"at"`
			Dir  string  `json:"dir"`
			Line string  `json:"line"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("tap log line %q: %v", sc.Text(), err)
		}
		if rec.Dir == "pids" {
			var p struct{ Tap, Child int }
			if err := json.Unmarshal([]byte(rec.Line), &p); err != nil {
				t.Fatalf("tap pids %q: %v", rec.Line, err)
			}
			l.Pids = append(l.Pids, p.Tap, p.Child)
			continue
		}
		en := TapEntry{at: rec.At, Dir: rec.Dir, Line: rec.Line}
		if err := json.Unmarshal([]byte(rec.Line), &en.Msg); err != nil {
			t.Errorf("a line on the upstream's wire is not JSON-RPC (%v): %q", err, rec.Line)
		}
		l.Entries = append(l.Entries, en)
	}
	return l
}

type TapCall struct {
	Id    json.RawMessage // mcpx's upstream request id
	Token json.RawMessage // mcpx's upstream progress token
	Line  string
}

// Call returns the one tools/call of tool that mcpx sent upstream.
func (l *TapLog) Call(t *testing.T, tool string) TapCall {
	t.Helper()
	var out []TapCall
	for _, en := range l.Entries {
		if en.Dir != "in" || en.Msg.Method != "tools/call" {
			continue
		}
		var p struct {
			Name string `json:"name"`
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		json.Unmarshal(en.Msg.Params, &p)
		if p.Name == tool {
			out = append(out, TapCall{Id: en.Msg.ID, Token: p.Meta.ProgressToken, Line: en.Line})
		}
	}
	if len(out) != 1 {
		t.Fatalf("mcpx sent %d tools/call of %s upstream, want 1; tap log:\n%s", len(out), tool, l.Raw)
	}
	return out[0]
}

type TapCancel struct {
	At        float64
	RequestID json.RawMessage
	Reason    string
	Line      string
}

// CancelsAll returns every notifications/cancelled mcpx sent upstream.
func (l *TapLog) CancelsAll() []TapCancel {
	var out []TapCancel
	for _, en := range l.Entries {
		if en.Dir != "in" || en.Msg.Method != "notifications/cancelled" || len(en.Msg.ID) > 0 {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		json.Unmarshal(en.Msg.Params, &p)
		out = append(out, TapCancel{At: en.at, RequestID: p.RequestID, Reason: p.Reason, Line: en.Line})
	}
	return out
}

// Cancels returns the cancellations of upstream request id.
func (l *TapLog) Cancels(id json.RawMessage) []TapCancel {
	var out []TapCancel
	for _, c := range l.CancelsAll() {
		if string(c.RequestID) == string(id) {
			out = append(out, c)
		}
	}
	return out
}

type TapProgress struct {
	At       float64
	progress float64
}

// Progress returns the progress notifications for token in direction dir.
func (l *TapLog) Progress(token json.RawMessage, dir string) []TapProgress {
	var out []TapProgress
	for _, en := range l.Entries {
		if en.Dir != dir || en.Msg.Method != "notifications/progress" {
			continue
		}
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
		}
		json.Unmarshal(en.Msg.Params, &p)
		if string(p.Token) == string(token) {
			out = append(out, TapProgress{At: en.at, progress: p.Progress})
		}
	}
	return out
}
