package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// duration reads a duration field: a Go duration string ("90s", "5m",
// "1h30m") or a JSON number of seconds, which may be fractional. 0 means no
// timer; negative values are errors.
func (p *parser) duration(n *node, at path) (time.Duration, error) {
	var (
		d   time.Duration
		err error
	)
	switch n.kind {
	case kindString:
		d, err = parseDuration(n.text)
	case kindNumber:
		d, err = parseSeconds(n.text)
	default:
		err = errors.New(`must be a duration such as "90s" or "5m", or a number of seconds`)
	}
	if err != nil {
		return 0, p.errorf(n.off, at, "%v", err)
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
			return 0, fmt.Errorf("invalid duration %q: missing unit (want e.g. %q, or the number %s without quotes for seconds)", s, s+"s", s)
		}
		return 0, fmt.Errorf(`invalid duration %q (want e.g. "90s", "5m", "1h30m", or a number of seconds)`, s)
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}

// parseSeconds converts a JSON number of seconds, rounded to the nanosecond.
func parseSeconds(num string) (time.Duration, error) {
	f, err := strconv.ParseFloat(num, 64) // JSON numbers fail only with ErrRange
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("invalid number of seconds %s", num)
	}
	// ParseFloat rounds underflow to 0 without an error: look at the digits.
	mantissa, _, _ := strings.Cut(strings.ToLower(num), "e")
	switch nonzero := strings.ContainsAny(mantissa, "123456789"); {
	case !nonzero:
		return 0, nil
	case strings.HasPrefix(num, "-"):
		return 0, errors.New("must not be negative")
	case f*1e9 >= math.MaxInt64: // also +Inf
		return 0, fmt.Errorf("%s seconds is too long", num)
	}
	d := time.Duration(math.Round(f * 1e9))
	if d == 0 {
		return 0, fmt.Errorf("%s seconds is shorter than a nanosecond (0 means no timer)", num)
	}
	return d, nil
}

// minIdleStop is the shortest idle stop accepted: shorter would stop a
// server between a host's listing and its call.
const minIdleStop = time.Second

// idleStop reads an idle stop: 0, or a duration of at least minIdleStop.
func (p *parser) idleStop(n *node, at path) (time.Duration, error) {
	d, err := p.duration(n, at)
	if err == nil && d != 0 && d < minIdleStop {
		return 0, p.errorf(n.off, at, "must be 0 (never) or at least %s", minIdleStop)
	}
	return d, err
}
