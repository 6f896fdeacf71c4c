package config

import (
	"testing"
	"time"
)

// TestLifecycleFields: idleStop is inherited from mcpx.idleStop unless a
// server sets its own (0: never); eager is per server; an idle stop under
// a second is refused.
func TestLifecycleFields(t *testing.T) {
	c, err := parse(`{"mcpx": {"idleStop": "10m"}, "mcpServers": {
		"a": {"command": "x"},
		"b": {"command": "x", "idleStop": 0, "eager": true},
		"c": {"url": "http://h", "idleStop": 90}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.IdleStop != 10*time.Minute {
		t.Errorf("mcpx.idleStop = %s, want 10m", c.IdleStop)
	}
	for name, want := range map[string]struct {
		idle  time.Duration
		eager bool
	}{"a": {10 * time.Minute, false}, "b": {0, true}, "c": {90 * time.Second, false}} {
		s := c.Servers[name]
		if s.IdleStop != want.idle || s.Eager != want.eager {
			t.Errorf("server %s: idleStop %s eager %v, want %s %v", name, s.IdleStop, s.Eager, want.idle, want.eager)
		}
	}
	d, err := parse(`{"mcpServers": {"a": {"command": "x"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if d.Servers["a"].IdleStop != 0 || d.Servers["a"].Eager {
		t.Errorf("defaults: idleStop %s eager %v, want 0 (never) and lazy", d.Servers["a"].IdleStop, d.Servers["a"].Eager)
	}

	const f = "config " + testFile + ": "
	for data, want := range map[string]string{
		`{"mcpx": {"idleStop": "500ms"}}`:           f + `mcpx.idleStop: must be 0 (never) or at least 1s`,
		srv(`{"command": "x", "idleStop": "-1m"}`):  f + `mcpServers.s.idleStop: must not be negative`,
		srv(`{"command": "x", "eager": "yes"}`):     f + `mcpServers.s.eager: must be true or false`,
		srv(`{"command": "x", "idlestop": "1m"}`):   f + `mcpServers.s.idlestop: unknown field (did you mean "idleStop"?)`,
		srv(`{"command": "x", "perHost": 1}`):       f + `mcpServers.s.perHost: must be true or false`,
		srv(`{"url": "http://h", "perhost": true}`): f + `mcpServers.s.perhost: unknown field (did you mean "perHost"?)`,
	} {
		_, err := parse(data)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", data, err, want)
		}
	}
}

// TestPerHost: perHost is per server, off unless set, for every transport.
func TestPerHost(t *testing.T) {
	c, err := parse(`{"mcpServers": {
		"a": {"command": "x"},
		"b": {"command": "x", "perHost": true},
		"c": {"url": "http://h", "perHost": true},
		"d": {"url": "http://h", "type": "sse", "perHost": false}}}`)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"a": false, "b": true, "c": true, "d": false} {
		if got := c.Servers[name].PerHost; got != want {
			t.Errorf("server %s: perHost %v, want %v", name, got, want)
		}
	}
}
