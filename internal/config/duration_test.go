package config

import (
	"testing"
	"time"
)

func TestDurations(t *testing.T) {
	const f = "config " + testFile + ": mcpx.idleTimeout: "
	tests := []struct {
		in   string // JSON
		want time.Duration
		err  string
	}{
		{in: `"90s"`, want: 90 * time.Second},
		{in: `"5m"`, want: 5 * time.Minute},
		{in: `"1h30m"`, want: 90 * time.Minute},
		{in: `"250ms"`, want: 250 * time.Millisecond},
		{in: `"0"`, want: 0},
		{in: `"0s"`, want: 0},
		{in: `0`, want: 0},
		{in: `-0`, want: 0},
		{in: `90`, want: 90 * time.Second},
		{in: `1.5`, want: 1500 * time.Millisecond},
		{in: `0.000000001`, want: time.Nanosecond},
		{in: `1e3`, want: 1000 * time.Second},
		{in: `-1`, err: f + "must not be negative"},
		{in: `-0.5`, err: f + "must not be negative"},
		{in: `-1e-400`, err: f + "must not be negative"},
		{in: `"-5m"`, err: f + "must not be negative"},
		{in: `"abc"`, err: f + `invalid duration "abc" (want e.g. "90s", "5m", "1h30m", or a number of seconds)`},
		{in: `""`, err: f + `invalid duration "" (want e.g. "90s", "5m", "1h30m", or a number of seconds)`},
		{in: `"5 m"`, err: f + `invalid duration "5 m" (want e.g. "90s", "5m", "1h30m", or a number of seconds)`},
		{in: `"9999999999h"`, err: f + `invalid duration "9999999999h" (want e.g. "90s", "5m", "1h30m", or a number of seconds)`},
		{in: `"5"`, err: f + `invalid duration "5": missing unit (want e.g. "5s", or the number 5 without quotes for seconds)`},
		{in: `1e-10`, err: f + "1e-10 seconds is shorter than a nanosecond (0 means no timer)"},
		{in: `1e-400`, err: f + "1e-400 seconds is shorter than a nanosecond (0 means no timer)"},
		{in: `1e300`, err: f + "1e300 seconds is too long"},
		{in: `1e400`, err: f + "1e400 seconds is too long"},
		{in: `9223372036.854775807`, err: f + "9223372036.854775807 seconds is too long"},
		{in: `null`, err: f + `must be a duration such as "90s" or "5m", or a number of seconds`},
		{in: `true`, err: f + `must be a duration such as "90s" or "5m", or a number of seconds`},
		{in: `{"s": 1}`, err: f + `must be a duration such as "90s" or "5m", or a number of seconds`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := parse(`{"mcpx": {"idleTimeout": ` + tt.in + `}}`)
			if tt.err != "" {
				if got := errString(err); got != tt.err {
					t.Errorf("error:\n got %s\nwant %s", got, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.IdleTimeout != tt.want {
				t.Errorf("IdleTimeout = %v, want %v", c.IdleTimeout, tt.want)
			}
		})
	}
}
