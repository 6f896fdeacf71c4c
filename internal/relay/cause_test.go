package relay

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestCauseError(t *testing.T) {
	tests := []struct {
		cause    Cause
		want     string
		kind     string
		answered bool
	}{
		{Cause{Kind: HostCancelled}, "cancelled by the host", "host_cancelled", false},
		{Cause{Kind: HostCancelled, Detail: "user clicked stop"}, "cancelled by the host: user clicked stop", "host_cancelled", false},
		{Cause{Kind: HostDisconnected}, "the host disconnected", "host_disconnected", false},
		{Cause{Kind: IdleTimeout, After: 30 * time.Second}, "idle timeout: no progress for 30s", "idle_timeout", true},
		{Cause{Kind: IdleTimeout, After: 1500 * time.Millisecond}, "idle timeout: no progress for 1.5s", "idle_timeout", true},
		{Cause{Kind: HardTimeout, After: time.Hour}, "hard maximum of 1h reached", "hard_timeout", true},
		{Cause{Kind: HardTimeout, After: 90 * time.Second}, "hard maximum of 1m30s reached", "hard_timeout", true},
		{Cause{Kind: Stopping}, "mcpx is stopping", "stopping", true},
		{Cause{Kind: UserInterrupt}, "interrupted by user", "user_interrupt", true},
		{Cause{Kind: ClientDisconnected}, "the client disconnected", "client_disconnected", false},
		{Cause{Kind: ClientDisconnected, Detail: "opencode"}, "the client disconnected (opencode)", "client_disconnected", false},
		{Cause{}, "cancelled", "", true},
		{Cause{Kind: 99}, "cancelled", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			c := tt.cause
			if got := c.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := c.Kind.String(); got != tt.kind {
				t.Errorf("Kind.String() = %q, want %q", got, tt.kind)
			}
			if got := c.Answered(); got != tt.answered {
				t.Errorf("Answered() = %v, want %v", got, tt.answered)
			}
			if got := Reason(&c); got != tt.want {
				t.Errorf("Reason() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEveryKindNamed(t *testing.T) {
	for k := HostCancelled; k <= ClientDisconnected; k++ {
		if k.String() == "" {
			t.Errorf("Kind %d has no name", k)
		}
		if msg := (&Cause{Kind: k}).Error(); msg == "cancelled" {
			t.Errorf("Kind %s has no message of its own", k)
		}
	}
}

func TestCauseOf(t *testing.T) {
	c := &Cause{Kind: IdleTimeout, After: time.Second}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(c)

	tests := []struct {
		name string
		err  error
		want *Cause
	}{
		{"the cause", c, c},
		{"wrapped", fmt.Errorf("calling tool: %w", c), c},
		{"from a context", context.Cause(ctx), c},
		{"plain error", errors.New("x"), nil},
		{"context.Canceled", context.Canceled, nil},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CauseOf(tt.err)
			if got != tt.want || ok != (tt.want != nil) {
				t.Errorf("CauseOf(%v) = %v, %v; want %v, %v", tt.err, got, ok, tt.want, tt.want != nil)
			}
		})
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, "cancelled"},
		{errors.New("boom"), "boom"},
		{&Cause{Kind: Stopping}, "mcpx is stopping"},
		{fmt.Errorf("x: %w", &Cause{Kind: UserInterrupt}), "x: interrupted by user"},
	}
	for _, tt := range tests {
		if got := Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{time.Nanosecond, "0ms"},
		{time.Millisecond, "1ms"},
		{250 * time.Millisecond, "250ms"},
		{999 * time.Millisecond, "999ms"},
		{time.Second, "1s"},
		{1500 * time.Millisecond, "1.5s"},
		{1250 * time.Millisecond, "1.25s"},
		{1001 * time.Millisecond, "1.001s"},
		{10 * time.Second, "10s"},
		{30 * time.Second, "30s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{90*time.Second + 400*time.Millisecond, "1m30s"},
		{10 * time.Minute, "10m"},
		{time.Hour, "1h"},
		{2 * time.Hour, "2h"},
		{time.Hour + 5*time.Second, "1h5s"},
		{25*time.Hour + 30*time.Minute + 1*time.Second, "25h30m1s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatDuration(tt.d); got != tt.want {
				t.Errorf("FormatDuration(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
