package relay

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"mcpx/internal/hostprofile"
	"mcpx/internal/jsonrpc"
)

// sentProgress is one notification's params as the host got them.
type sentProgress struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total"`
	Message  string          `json:"message"`
}

// hostLog is what a host is sent.
type hostLog struct {
	mu   sync.Mutex
	sent []sentProgress
}

func (l *hostLog) all() []sentProgress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent)
}

// heartbeatCall returns a call state whose host has profile p and gave
// token (nil: none), and what the host is sent.
func heartbeatCall(t *testing.T, p hostprofile.Profile, token json.RawMessage) (*callState, *hostLog) {
	log := &hostLog{}
	params, err := jsonrpc.ParseObject([]byte(`{"name":"files__export"}`))
	if err != nil {
		t.Fatal(err)
	}
	st := &callState{}
	st.c = Call{Server: "files", Tool: "export", HostProfile: p, HostToken: token,
		Params: params}
	if token != nil {
		st.c.Progress = func(params json.RawMessage) {
			var s sentProgress
			if err := json.Unmarshal(params, &s); err != nil {
				t.Errorf("the host got %s: %v", params, err)
			}
			log.mu.Lock()
			log.sent = append(log.sent, s)
			log.mu.Unlock()
		}
	}
	st.call = &st.c
	return st, log
}

// TestHeartbeats: a silent call behind a host whose timer progress resets
// gets a heartbeat each third of that timer, under the host's token, with
// values that increase and a message saying what mcpx waits on; the
// upstream's own progress counts as the host's news, and a later upstream
// value the host would read as no higher than a heartbeat's is raised
// above it. Nothing is sent once the call has ended.
func TestHeartbeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hostprofile.Profile{Name: "h", Timeout: 3 * time.Second, ResetOnProgress: true}
		st, log := heartbeatCall(t, p, json.RawMessage(`"tok"`))
		st.startHeartbeat(time.Now(), hostToolName(st.call))

		time.Sleep(2500 * time.Millisecond)
		if len(log.all()) != 2 {
			t.Fatalf("after 2.5 s of silence the host got %d heartbeats, want 2 (at 1 s, 2 s): %+v", len(log.all()), log.all())
		}
		first := log.all()[0]
		if string(first.Token) != `"tok"` || first.Progress != 0 || first.Total != nil ||
			first.Message != "waiting on files__export: no news for 1.0 s" {
			t.Errorf("first heartbeat %+v", first)
		}
		if second := log.all()[1]; second.Progress <= 0 || second.Progress > 1e-300 || second.Message != "waiting on files__export: no news for 2.0 s" {
			t.Errorf("second heartbeat %+v: want a value just above 0", second)
		}

		// The upstream's first value, 0, is below what the host was
		// sent: it goes on raised above it.
		st.onProgress([]byte(`{"progressToken":"up-1","progress":0,"total":10,"message":"starting"}`))
		if got := log.all()[2]; got.Progress <= log.all()[1].Progress || got.Progress > 1e-300 || got.Message != "starting" || *got.Total != 10 {
			t.Errorf("the upstream's 0 reached the host as %+v", got)
		}
		// Upstream progress is news: no heartbeat until a full third
		// after it.
		time.Sleep(900 * time.Millisecond)
		if len(log.all()) != 3 {
			t.Fatalf("a heartbeat 0.9 s after the upstream's progress: %+v", log.all()[3:])
		}
		st.onProgress([]byte(`{"progress":5,"total":10}`))
		if got := log.all()[3]; got.Progress != 5 {
			t.Errorf("the upstream's 5 reached the host as %v", got.Progress)
		}
		time.Sleep(10500 * time.Millisecond)
		beats := log.all()[4:]
		if len(beats) != 10 {
			t.Fatalf("10.5 s of silence gave %d heartbeats, want 10", len(beats))
		}
		prev := 5.0
		for i, b := range beats {
			if b.Progress <= prev || b.Progress-5 > 1e-12 || b.Total == nil || *b.Total != 10 {
				t.Errorf("heartbeat %d: %+v after %v", i, b, prev)
			}
			prev = b.Progress
		}
		if want := "waiting on files__export: no news for 10 s"; beats[9].Message != want {
			t.Errorf("the tenth heartbeat says %q, want %q", beats[9].Message, want)
		}
		// A value between the upstream's last and the heartbeats'.
		st.onProgress([]byte(`{"progress":` + string(formatProgress(math.Nextafter(5, 6))) + `}`))
		if got := log.all()[len(log.all())-1]; got.Progress <= prev {
			t.Errorf("an upstream value below the last heartbeat's reached the host as %v, not above %v", got.Progress, prev)
		}

		st.stopHeartbeat()
		n := len(log.all())
		time.Sleep(time.Minute)
		if len(log.all()) != n {
			t.Errorf("%d heartbeats after the call ended", len(log.all())-n)
		}
	})
}

// TestNoHeartbeats: no token, a hard timer, or no timer: no heartbeats.
func TestNoHeartbeats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     hostprofile.Profile
		token json.RawMessage
	}{
		{"no token", hostprofile.Profile{Timeout: time.Second, ResetOnProgress: true}, nil},
		{"hard timer", hostprofile.Profile{Timeout: time.Second}, json.RawMessage(`1`)},
		{"no timer", hostprofile.Profile{ResetOnProgress: true}, json.RawMessage(`1`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st, log := heartbeatCall(t, tc.p, tc.token)
				st.startHeartbeat(time.Now(), hostToolName(st.call))
				defer st.stopHeartbeat()
				time.Sleep(time.Minute)
				if len(log.all()) != 0 {
					t.Errorf("the host got %+v", log.all())
				}
			})
		})
	}
}

// TestHeartbeatsLeaveIdleTimer: heartbeats keep the host's timer from
// firing, never mcpx's own idle timer toward the silent upstream.
func TestHeartbeatsLeaveIdleTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		p := hostprofile.Profile{Timeout: 900 * time.Millisecond, ResetOnProgress: true}
		st, log := heartbeatCall(t, p, json.RawMessage(`"tok"`))
		st.idle = 2 * time.Second
		st.timer = newCallTimer(0, cancel)
		defer st.timer.stop()
		st.timer.startIdle(st.idle)
		st.startHeartbeat(time.Now(), hostToolName(st.call))
		defer st.stopHeartbeat()
		start := time.Now()
		<-ctx.Done()
		var c *Cause
		if !errors.As(context.Cause(ctx), &c) || c.Kind != IdleTimeout {
			t.Fatalf("cause %v, want the idle timeout", context.Cause(ctx))
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("the idle timer fired after %v, want 2s", d)
		}
		if len(log.all()) != 6 {
			t.Errorf("%d heartbeats in 2 s at 0.3 s, want 6", len(log.all()))
		}
		for _, s := range log.all() {
			if !strings.HasPrefix(s.Message, "waiting on files__export") {
				t.Errorf("heartbeat message %q", s.Message)
			}
		}
	})
}

// TestHostDeadline: when the host's timer would fire, for a caller that
// must answer before it.
func TestHostDeadline(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	progress := func(json.RawMessage) {}
	for _, tc := range []struct {
		name string
		c    Call
		want time.Time
	}{
		{"hard", Call{HostSince: since, HostProfile: hostprofile.Profile{Timeout: time.Minute}, HostToken: json.RawMessage(`1`), Progress: progress}, since.Add(time.Minute)},
		{"no timer", Call{HostSince: since, HostProfile: hostprofile.Profile{}}, time.Time{}},
		{"reset, heartbeats", Call{HostSince: since, HostProfile: hostprofile.Profile{Timeout: time.Minute, ResetOnProgress: true}, HostToken: json.RawMessage(`1`), Progress: progress}, time.Time{}},
		{"reset, no token", Call{HostSince: since, HostProfile: hostprofile.Profile{Timeout: time.Minute, ResetOnProgress: true}}, since.Add(time.Minute)},
	} {
		if got := tc.c.HostDeadline(); !got.Equal(tc.want) {
			t.Errorf("%s: HostDeadline() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
