package authn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// introspectLookups bounds the introspection requests in flight: a flood
// of wrong tokens waits its turn and cannot make mcpx flood the
// authorization server.
const introspectLookups = 8

// introspector asks the introspection endpoint about opaque tokens
// (RFC 7662), keeping answers briefly.
type introspector struct {
	o     *Options
	turns chan struct{}

	mu    sync.Mutex
	cache map[[32]byte]introspected
}

// introspected is one answer: an identity, or a refusal, until until.
type introspected struct {
	id    Identity
	err   *Error
	until time.Time
}

func newIntrospector(o *Options) *introspector {
	return &introspector{o: o, turns: make(chan struct{}, introspectLookups), cache: map[[32]byte]introspected{}}
}

func (in *introspector) verify(ctx context.Context, tok string) (Identity, error) {
	key := sha256.Sum256([]byte(tok))
	now := in.o.Now()
	in.mu.Lock()
	e, ok := in.cache[key]
	in.mu.Unlock()
	if ok && now.Before(e.until) {
		if e.err != nil {
			return Identity{}, e.err
		}
		return e.id, nil
	}
	id, err := in.ask(ctx, tok)
	var ae *Error
	if err != nil && !errors.As(err, &ae) {
		ae = &Error{Kind: Invalid, Why: "the introspection answer is not usable", Err: err}
		err = ae
	}
	if ae != nil && ae.Kind == Unavailable {
		in.o.Logger.Warn("cannot reach the introspection endpoint: opaque tokens are refused until it answers", "url", in.o.IntrospectionURL, "err", ae.Err)
		return Identity{}, err // not kept: asked again next time
	}
	e = introspected{id: id, until: now.Add(in.o.IntrospectionTTL)}
	if err != nil {
		e.err, e.until = ae, now.Add(min(in.o.IntrospectionTTL, 5*time.Second))
	} else if !id.Expiry.IsZero() && id.Expiry.Before(e.until) {
		e.until = id.Expiry
	}
	in.put(key, e, now)
	return id, err
}

// put keeps e, first dropping expired answers, then, if the cache is
// still full, any one.
func (in *introspector) put(key [32]byte, e introspected, now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= in.o.CacheSize {
		for k, c := range in.cache {
			if !now.Before(c.until) {
				delete(in.cache, k)
			}
		}
		for k := range in.cache {
			if len(in.cache) < in.o.CacheSize {
				break
			}
			delete(in.cache, k)
		}
	}
	in.cache[key] = e
}

// ask asks the endpoint about tok.
func (in *introspector) ask(ctx context.Context, tok string) (Identity, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	select {
	case in.turns <- struct{}{}:
		defer func() { <-in.turns }()
	case <-ctx.Done():
		return Identity{}, unavailable(context.Cause(ctx), "too many tokens are being introspected at once")
	}
	form := url.Values{"token": {tok}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.o.IntrospectionURL, strings.NewReader(form.Encode()))
	if err != nil {
		return Identity{}, unavailable(err, "cannot introspect the token")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.o.ClientID), url.QueryEscape(in.o.ClientSecret))
	resp, err := in.o.Client.Do(req)
	if err != nil {
		return Identity{}, unavailable(err, "cannot reach the introspection endpoint")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Identity{}, unavailable(fmt.Errorf("it answered %s", resp.Status), "the introspection endpoint did not answer")
	}
	var c map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&c); err != nil {
		return Identity{}, unavailable(err, "the introspection endpoint's answer is not JSON")
	}
	return in.judge(c)
}

// judge reads an introspection answer: active, of a configured issuer
// (the first when it names none), for this resource (its aud, if it has
// one, names the audience or the client mcpx introspects as, which the
// server only answers for tokens issued to it), and in time.
func (in *introspector) judge(c map[string]any) (Identity, error) {
	if active, _ := c["active"].(bool); !active {
		return Identity{}, invalid("the token is not active (introspection)")
	}
	iss, _ := c["iss"].(string)
	if iss == "" {
		iss = in.o.Issuers[0]
	} else if !slices.Contains(in.o.Issuers, iss) {
		return Identity{}, invalid("the token's issuer is not one mcpx takes tokens of")
	}
	if aud, ok := c["aud"]; ok && !audience(aud, in.o.Audience, in.o.ClientID) {
		return Identity{}, invalid("the token is not for this resource: its audience (aud) does not name %s", in.o.Audience)
	}
	if err := in.o.timely(c, false); err != nil {
		return Identity{}, err
	}
	return in.o.identity(iss, c)
}
