package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/jsonrpc"
)

func TestBadInput(t *testing.T) {
	p := startPeer(t, nil)
	tests := []struct {
		line   string
		id     string
		code   int64
		answer bool
	}{
		{`{not json`, "null", jsonrpc.CodeParseError, true},
		{`this is not json`, "null", jsonrpc.CodeParseError, true},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, "5", jsonrpc.CodeInvalidRequest, true},
		{`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, "null", jsonrpc.CodeInvalidRequest, true},
		{req("7", "no/such/method", `{}`), "7", jsonrpc.CodeMethodNotFound, true},
		{req("8", "tools/list", `[1]`), "8", jsonrpc.CodeInvalidParams, true},
		{req("9", "tools/call", `{"name":"nope"}`), "9", jsonrpc.CodeInvalidParams, true},
		{req("10", "tools/call", `{"name":"burst","_meta":{"progressToken":{}}}`), "10", jsonrpc.CodeInvalidParams, true},
		{`{"jsonrpc":"2.0","method":"no/such/notification"}`, "", 0, false},
		{`{"jsonrpc":"2.0","id":11,"result":{}}`, "", 0, false}, // a response: ignored
	}
	for _, tt := range tests {
		p.send(tt.line)
		if !tt.answer {
			continue
		}
		m := p.msg()
		if m.ID.String() != tt.id || m.Error == nil || m.Error.Code != tt.code {
			t.Errorf("%s: got %s, want error %d with id %s", tt.line, m.Encode(), tt.code, tt.id)
		}
	}
	// Still serving, and nothing was answered for the notification or response.
	if got := string(result(t, p.call("12", req("12", "ping", `{}`)))); got != `{}` {
		t.Errorf("ping after bad input = %s", got)
	}
}

func TestDuplicateID(t *testing.T) {
	p := startPeer(t, nil)
	p.send(callReq("1", "wait", `{"seconds":30}`, ""))
	p.event(func(e Event) bool { return e.Event == EventRequest })
	if e := rpcError(t, p.call("1", req("1", "ping", `{}`))); e.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("duplicate id: %v, want -32600", e)
	}
	p.send(cancelNote("1", "done"))
	p.event(finished("1"))
}

func TestServeStops(t *testing.T) {
	t.Run("eof", func(t *testing.T) {
		p := startPeer(t, nil)
		p.send(callReq("1", "wait", `{"seconds":30}`, ""))
		p.send(callReq("2", "stubborn", `{"seconds":30}`, ""))
		p.event(func(e Event) bool { return e.Event == EventRequest && string(e.ID) == "2" })
		start := time.Now()
		if err := p.close(); err != nil {
			t.Errorf("Serve = %v, want nil at EOF", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Serve took %v to stop", d)
		}
		for range 2 {
			if e := p.event(func(e Event) bool { return e.Event == EventFinished }); e.Outcome != OutcomeShutdown {
				t.Errorf("running request at EOF: %+v", e)
			}
		}
	})
	t.Run("context", func(t *testing.T) {
		p := startPeer(t, nil)
		p.send(callReq("1", "wait", `{"seconds":30}`, ""))
		p.event(func(e Event) bool { return e.Event == EventRequest })
		p.cancel()
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("Serve = %v, want nil on cancel", err)
			}
			p.done <- err // for close
		case <-time.After(deadline):
			t.Fatal("Serve did not return after cancel")
		}
	})
	t.Run("bad options", func(t *testing.T) {
		for _, o := range []Options{{Era: "future"}, {MaxVersion: "2026-07-28"}, {PageSize: -1}, {InitDelay: -1}} {
			if err := Serve(context.Background(), strings.NewReader(""), io.Discard, &o); err == nil {
				t.Errorf("Serve(%+v) = nil, want an error", o)
			}
		}
	})
	t.Run("nil options", func(t *testing.T) {
		var out bytes.Buffer
		in := strings.NewReader(req("1", "ping", `{}`) + "\n")
		if err := Serve(context.Background(), in, &out, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := out.String(), `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"; got != want {
			t.Errorf("output %q, want %q", got, want)
		}
	})
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	got, err := ParseFlags([]string{"-era", "modern", "-max-version", "2025-06-18", "-ignore-discover",
		"-init-delay", "2s", "-page-size", "3", "-record", "r.jsonl", "-wire-log", "w.log"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	want := &Options{Era: EraModern, MaxVersion: "2025-06-18", IgnoreDiscover: true, InitDelay: 2 * time.Second,
		PageSize: 3, Record: "r.jsonl", WireLog: "w.log"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	got, err = ParseFlags(nil, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Options{Era: EraAuto, MaxVersion: "2025-11-25"}, got); diff != "" {
		t.Errorf("default options (-want +got):\n%s", diff)
	}
	for _, args := range [][]string{{"-era", "x"}, {"-max-version", "2026-07-28"}, {"extra"}, {"-page-size", "-2"}, {"-nope"}} {
		if _, err := ParseFlags(args, &stderr); err == nil {
			t.Errorf("ParseFlags(%q) = nil error", args)
		}
	}
	stderr.Reset()
	if _, err := ParseFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(stderr.String(), "usage: mcpx demo [flags]") || !strings.Contains(stderr.String(), "-ignore-discover") {
		t.Errorf("usage:\n%s", stderr.String())
	}
}

func FuzzServe(f *testing.F) {
	f.Add([]byte(req("1", "ping", `{}`) + "\n" + cancelNote("1", "x")))
	f.Add([]byte(callReq("1", "burst", `{"count":3}`, `{"progressToken":"t"}`) + "\n{bad\n"))
	f.Add([]byte(callReq("1", "garbage", `{}`, modernMeta("")) + "\n" + callReq("2", "echo", `{"a":[1]}`, "")))
	f.Add([]byte(initReq("1", "2025-03-26") + "\n" + req("2", "tools/list", `{"cursor":"x"}`)))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		opts := &Options{PageSize: 4, Exit: func(int) {}}
		if err := Serve(context.Background(), bytes.NewReader(in), &out, opts); err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(out.String()) {
			line = strings.TrimSuffix(line, "\n")
			if line != "this is not json" && !json.Valid([]byte(line)) {
				t.Errorf("invalid output line %q", line)
			}
		}
	})
}
