package oauth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"mcpx/internal/config"
)

// A failed exchange is not tried again on every call: the person's next
// exchange for that server waits, 1 s after the first failure, twice as
// long after each next one, at most 5 min; a success forgets the
// failures. Until then Exchange answers at once with the last failure's
// reason. What is remembered is bounded (exchangeBackoffKeep pairs of
// person and server). A provider named by its issuer is asked for its
// metadata once an hour, not on every exchange.

const (
	exchangeBackoffMin  = time.Second
	exchangeBackoffMax  = 5 * time.Minute
	exchangeBackoffKeep = 10000
	endpointTTL         = time.Hour
)

// exchangeFailures are the recent failed exchanges, and the token
// endpoints discovered from issuers. The zero value is ready.
type exchangeFailures struct {
	mu        sync.Mutex
	failed    map[string]*exchangeFailure // by server "\x00" principal
	endpoints map[string]endpoint         // by issuer
}

type exchangeFailure struct {
	delay time.Duration // the wait after the last failure
	until time.Time     // no exchange before
	err   error         // the last failure
}

type endpoint struct {
	url   string
	until time.Time
}

// BackoffError answers an exchange not tried because the last one of
// the same person and server failed a short while ago.
type BackoffError struct {
	Retry time.Duration // until the next try
	Last  error         // the last failure
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("%v; mcpx asks again in %s, not before", e.Last, e.Retry.Round(time.Second))
}

func (e *BackoffError) Unwrap() error { return e.Last }

// waiting returns the BackoffError of key while its wait runs.
func (f *exchangeFailures) waiting(key string, now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.failed[key]; e != nil && now.Before(e.until) {
		return &BackoffError{Retry: e.until.Sub(now), Last: e.err}
	}
	return nil
}

// fail notes a failed exchange of key: the wait doubles if the last
// failure's wait had not long passed (twice the longest wait), else it
// starts again at the least.
func (f *exchangeFailures) fail(key string, err error, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed == nil {
		f.failed = map[string]*exchangeFailure{}
	}
	e := f.failed[key]
	switch {
	case e != nil && now.Sub(e.until) < 2*exchangeBackoffMax:
		e.delay = min(2*e.delay, exchangeBackoffMax)
	case e == nil && len(f.failed) >= exchangeBackoffKeep:
		f.sweepLocked(now)
		fallthrough
	default:
		e = &exchangeFailure{delay: exchangeBackoffMin}
		f.failed[key] = e
	}
	e.until, e.err = now.Add(e.delay), err
}

// sweepLocked forgets failures whose wait has long passed, and, if that
// leaves the map full, one more.
func (f *exchangeFailures) sweepLocked(now time.Time) {
	for k, e := range f.failed {
		if now.Sub(e.until) >= 2*exchangeBackoffMax {
			delete(f.failed, k)
		}
	}
	for k := range f.failed {
		if len(f.failed) < exchangeBackoffKeep {
			break
		}
		delete(f.failed, k)
	}
}

// succeeded forgets key's failures.
func (f *exchangeFailures) succeeded(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.failed, key)
}

// tokenEndpoint is te's token endpoint: configured, or discovered from
// its issuer's metadata by the discovery mcpx login uses, kept for an
// hour.
func (x *Exchanger) tokenEndpoint(ctx context.Context, c *Client, te *config.TokenExchange) (string, error) {
	if te.TokenEndpoint != "" {
		return te.TokenEndpoint, nil
	}
	f := &x.failures
	now := time.Now()
	f.mu.Lock()
	ep, ok := f.endpoints[te.Issuer]
	f.mu.Unlock()
	if ok && now.Before(ep.until) {
		return ep.url, nil
	}
	md, err := c.DiscoverServer(ctx, te.Issuer)
	if err != nil {
		return "", fmt.Errorf("discovering the token endpoint of issuer %s: %w", te.Issuer, err)
	}
	if md.TokenEndpoint == "" {
		return "", errors.New("issuer " + te.Issuer + " names no token endpoint")
	}
	f.mu.Lock()
	if f.endpoints == nil {
		f.endpoints = map[string]endpoint{}
	}
	f.endpoints[te.Issuer] = endpoint{url: md.TokenEndpoint, until: now.Add(endpointTTL)}
	f.mu.Unlock()
	return md.TokenEndpoint, nil
}
