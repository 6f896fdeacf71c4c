package demo

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRecordAndWireLog(t *testing.T) {
	dir := t.TempDir()
	record, wire := filepath.Join(dir, "record.jsonl"), filepath.Join(dir, "wire.log")
	p := startPeer(t, &Options{Record: record, WireLog: wire})
	sent := []string{
		initReq("1", "2025-11-25"),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		callReq("2", "export", `{"seconds":30,"steps":10}`, `{"progressToken":12345678901234567890,"x-k":[1]}`),
	}
	// Wait between steps, so that the record's order is the wire's.
	p.send(sent[0])
	got := []string{string(p.line())} // the initialize response
	p.event(finished("1"))
	p.send(sent[1])
	p.send(sent[2])
	got = append(got, string(p.line())) // the first progress
	sent = append(sent, cancelNote("2", "user gave up"), `{bad`, callReq("3", "garbage", `{}`, ""))
	p.send(sent[3])
	p.event(finished("2"))
	p.send(sent[4])
	p.send(sent[5])
	for range 3 { // the parse error, the garbage line, the garbage result
		got = append(got, string(p.line()))
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}

	var wantWire []string
	for _, l := range sent {
		wantWire = append(wantWire, "< "+l)
	}
	var gotWire []string
	for _, l := range lines(t, wire) {
		if strings.HasPrefix(l, "> ") {
			if len(got) == 0 || l != "> "+got[0] {
				t.Errorf("wire log line %q, want the next output line", l)
			} else {
				got = got[1:]
			}
			continue
		}
		gotWire = append(gotWire, l)
	}
	if diff := cmp.Diff(wantWire, gotWire); diff != "" || len(got) != 0 {
		t.Errorf("wire log input (-want +got):\n%s\noutput lines missing: %q", diff, got)
	}

	var kinds []string
	var events []Event
	for _, l := range lines(t, record) {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.At == "" {
			t.Fatalf("record line %s: %v", l, err)
		}
		kinds = append(kinds, e.Event+":"+string(e.ID)+string(e.RequestID)+":"+e.Outcome)
		events = append(events, e)
	}
	want := []string{"request:1:", "initialize:1:", "finished:1:result", "request:2:", "cancelled:2:",
		"finished:2:cancelled", "request:3:", "finished:3:result"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if e := events[3]; string(e.ProgressToken) != "12345678901234567890" || string(e.Meta) != `{"progressToken":12345678901234567890,"x-k":[1]}` || e.Tool != "export" {
		t.Errorf("request event %+v", e)
	}
	if e := events[4]; e.Reason != "user gave up" || !*e.Known || e.Method != "tools/call" || e.Tool != "export" {
		t.Errorf("cancelled event %+v", e)
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(bytes.TrimSuffix(b, []byte("\n"))), "\n")
}

// TestRecordProgress: with RecordProgress, each progress notification
// sent is recorded, in order, with its value and message; without it,
// none is.
func TestRecordProgress(t *testing.T) {
	for _, on := range []bool{true, false} {
		p := startPeer(t, &Options{RecordProgress: on})
		p.send(initReq("1", "2025-11-25"))
		p.line()
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		p.send(callReq("3", "export", `{"seconds":0.05,"steps":3}`, `{"progressToken":"t"}`))
		sent, _ := p.until("3")
		var got []float64
		p.event(func(ev Event) bool {
			if ev.Event == EventProgress {
				if string(ev.ID) != "3" || ev.Tool != "export" || ev.Message == "" {
					t.Errorf("progress record %+v, want call 3's export with its message", ev)
				}
				got = append(got, *ev.Progress)
			}
			return finished("3")(ev)
		})
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 3, false: 0}[on]; len(sent) != 3 || len(got) != want {
			t.Errorf("RecordProgress %v: recorded %v for %d notifications sent, want %d", on, got, len(sent), want)
		}
	}
}
