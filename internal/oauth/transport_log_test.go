package oauth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// flakyRecords fails every Load while err is set.
type flakyRecords struct {
	mu  sync.Mutex
	err error
}

func (f *flakyRecords) set(err error) { f.mu.Lock(); f.err = err; f.mu.Unlock() }

func (f *flakyRecords) Load(context.Context, string) (*Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return nil, ErrNoRecord
}

func (f *flakyRecords) Save(context.Context, *Record) error { return nil }

func (f *flakyRecords) Delete(context.Context, string) error { return nil }

func (f *flakyRecords) Update(context.Context, string, func(*Record) (*Record, error)) (*Record, error) {
	return nil, nil
}

// A sign-in that cannot be read (a wrong key) is logged when the reason
// is new, not on every request: a gateway's log is not flooded by one
// broken setting, and a reason that changes or clears is still seen.
func TestTransportLogsReadErrorsOnce(t *testing.T) {
	var buf bytes.Buffer
	recs := &flakyRecords{}
	tr := &Transport{Server: "s", URL: "https://s/mcp", Store: recs, Client: &Client{},
		Log: slog.New(slog.NewTextHandler(&buf, nil)),
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})}
	send := func(n int) {
		for range n {
			req, _ := http.NewRequest(http.MethodPost, "https://s/mcp", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	count := func(s string) int { return strings.Count(buf.String(), s) }

	recs.set(errors.New("the sign-in was sealed with key k1, not the configured key"))
	send(5)
	if n := count("cannot read the server's sign-in"); n != 1 {
		t.Fatalf("5 requests with a wrong key logged %d warnings, want 1:\n%s", n, buf.String())
	}
	recs.set(errors.New("the store is unavailable"))
	send(3)
	if n := count("cannot read the server's sign-in"); n != 2 || count("the store is unavailable") != 1 {
		t.Fatalf("a new reason: %d warnings, want 2:\n%s", n, buf.String())
	}
	recs.set(nil)
	send(3)
	if n := count("can be read again"); n != 1 {
		t.Fatalf("reads that work again logged %d times, want 1:\n%s", n, buf.String())
	}
}
