package hoststream

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/sock"
)

// newTestHandoff is a handoffConn without pipes (its writes are fed to
// wrote directly), with its table mapped a second time as serve would,
// and serve's end of the event socket.
func newTestHandoff(t *testing.T) (c *handoffConn, serve *idTable, events *bufio.Reader) {
	t.Helper()
	f, err := createTable()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mine, err := mapTable(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if serve, err = mapTable(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	daemon, serveEnd := socketPair(t)
	t.Cleanup(func() { mine.Close(); serve.Close() })
	c = &handoffConn{table: mine, ctl: daemon, overflow: map[string]bool{}}
	return c, serve, bufio.NewReader(serveEnd)
}

// socketPair is two connected unix sockets, closed at the test's end.
func socketPair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]*net.UnixConn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pair")
		fc, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = fc.(*net.UnixConn)
	}
	t.Cleanup(func() { conns[0].Close(); conns[1].Close() })
	return conns[0], conns[1]
}

func sawLine(t *testing.T, c *handoffConn, line string) {
	t.Helper()
	msg, err := jsonrpc.Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	c.Saw(msg, []byte(line))
}

func pendingIDs(tb *idTable) []string {
	ids := tb.Pending()
	slices.Sort(ids)
	return ids
}

// TestHandoffTracksAnswersByTheByte: a request stays pending until the
// newline of its answer is written, however the writes split the line;
// notifications and requests to the host do not settle anything.
func TestHandoffTracksAnswersByTheByte(t *testing.T) {
	c, serve, _ := newTestHandoff(t)
	sawLine(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	sawLine(t, c, `{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"b"}}`)
	sawLine(t, c, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := pendingIDs(serve); !slices.Equal(got, []string{`"two"`, `1`, `3`}) {
		t.Fatalf("pending %q", got)
	}

	out := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":"two","result":{"content":[{"type":"text","text":"long"}]}}` + "\n"
	cut := strings.Index(out, `"two","result"`) + 20 // inside the answer to "two"
	c.wrote([]byte(out), cut)
	if got := pendingIDs(serve); !slices.Equal(got, []string{`"two"`, `3`}) {
		t.Fatalf("after a write that ends inside the answer to \"two\": pending %q", got)
	}
	if !serve.Partial() {
		t.Fatal("a line is partly written, and the table does not say so")
	}
	rest := []byte(out[cut:])
	c.wrote(rest, len(rest)-1) // all but the newline
	if got := pendingIDs(serve); !slices.Equal(got, []string{`"two"`, `3`}) {
		t.Fatalf("before its newline: pending %q", got)
	}
	c.wrote(rest[len(rest)-1:], 1)
	if got := pendingIDs(serve); !slices.Equal(got, []string{`3`}) {
		t.Fatalf("after its newline: pending %q", got)
	}
	if serve.Partial() {
		t.Fatal("partial after whole lines")
	}
	// An error answers too.
	e := []byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}` + "\n")
	c.wrote(e, len(e))
	if got := pendingIDs(serve); len(got) != 0 {
		t.Fatalf("pending %q after every answer", got)
	}
}

// TestHandoffEvents: the handshake, a cancel, and ids the table cannot
// hold reach serve as events; a cancelled request needs no answer.
func TestHandoffEvents(t *testing.T) {
	c, serve, events := newTestHandoff(t)
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	sawLine(t, c, init)
	sawLine(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sawLine(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`) // once is told
	sawLine(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`)
	sawLine(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	long := `"` + strings.Repeat("L", maxID) + `"`
	sawLine(t, c, `{"jsonrpc":"2.0","id":`+long+`,"method":"tools/call","params":{}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":` + long + `,"result":{}}` + "\n")
	c.wrote(answer, len(answer))

	var got []apitype.HandoffEvent
	_ = c.ctl.Close() // serve's reader sees the end after the events
	for {
		line, err := events.ReadBytes('\n')
		if err != nil {
			break
		}
		var ev apitype.HandoffEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 4 || string(got[0].Initialize) != init || !got[1].Initialized ||
		string(got[2].Add) != long || string(got[3].Remove) != long {
		t.Fatalf("events: %+v", got)
	}
	if ids := pendingIDs(serve); !slices.Equal(ids, []string{`0`}) {
		t.Fatalf("pending %q: want only the unanswered initialize (5 was cancelled)", ids)
	}
}

// TestHandoffDropsTheReplayAnswer: the answer to a replayed initialize is
// left out of what the host gets, whatever the writes' sizes, and counted
// as written; the rest goes through whole.
func TestHandoffDropsTheReplayAnswer(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n"
	replay := `{"jsonrpc":"2.0","id":` + apitype.HandoffReplayID + `,"result":{"protocolVersion":"2025-11-25"}}` + "\n"
	answer := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	for _, step := range []int{1, 7, 64, 1 << 10} {
		c, serve, _ := newTestHandoff(t)
		c.dropReplay = true
		sawLine(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
		var host []byte
		w := func(b []byte) (int, error) { // a pipe that takes step bytes at a time
			n := min(len(b), step)
			host = append(host, b[:n]...)
			return n, nil
		}
		p := []byte(progress + replay + answer)
		for len(p) > 0 {
			n, err := c.write(p, w)
			if err != nil || n == 0 {
				t.Fatalf("step %d: wrote %d, %v", step, n, err)
			}
			p = p[n:]
		}
		if string(host) != progress+answer {
			t.Errorf("step %d: the host got %q", step, host)
		}
		if ids := serve.Pending(); len(ids) != 0 || serve.Partial() {
			t.Errorf("step %d: pending %q, partial %v after every answer", step, ids, serve.Partial())
		}
		if c.dropReplay {
			t.Errorf("step %d: still waiting for the replay's answer", step)
		}
	}
}

// TestHandoffGivesBackWhatItDidNotServe: a daemon that cannot take a
// handed-over host (a table file it does not know), or takes it and never
// reads (stopping), gives serve back the host's bytes serve had sent it,
// without serve's own replay, and says which.
func TestHandoffGivesBackWhatItDidNotServe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		badTable bool
		wantEnd  string
	}{
		{"refused", true, apitype.HandoffRefused},
		{"never-read", false, apitype.HandoffStopping},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serveHost := func(conn io.ReadWriteCloser) error { return conn.Close() }
			serve, daemon := socketPair(t)
			done := make(chan struct{})
			go func() { defer close(done); ServeHandoff(daemon, serveHost, slog.New(slog.DiscardHandler)) }()
			defer func() { serve.Close(); <-done }()

			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			defer func() { inR.Close(); inW.Close(); outR.Close(); outW.Close() }()
			table, err := createTable()
			if err != nil {
				t.Fatal(err)
			}
			defer table.Close()
			if tc.badTable {
				if err := table.Truncate(tableSize / 2); err != nil {
					t.Fatal(err)
				}
			}
			if err := sock.SendFiles(serve, int(inR.Fd()), int(outW.Fd()), int(table.Fd())); err != nil {
				t.Fatal(err)
			}
			hostBytes := `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":4,`
			start, _ := json.Marshal(&apitype.HandoffStart{
				Replay:      json.RawMessage(`{"jsonrpc":"2.0","id":` + apitype.HandoffReplayID + `,"method":"initialize","params":{}}`),
				Initialized: true,
				Rest:        []byte(hostBytes),
			})
			if _, err := serve.Write(append(start, '\n')); err != nil {
				t.Fatal(err)
			}
			_ = serve.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, err := bufio.NewReader(serve).ReadBytes('\n')
			if err != nil {
				t.Fatalf("no event: %v", err)
			}
			var ev apitype.HandoffEvent
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.End != tc.wantEnd || string(ev.Rest) != hostBytes {
				t.Fatalf("event end %q rest %q, want %q and the host's bytes %q", ev.End, ev.Rest, tc.wantEnd, hostBytes)
			}
		})
	}
}
