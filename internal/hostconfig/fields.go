package hostconfig

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sreader reads one server object of a JSON host file, field by field.
type sreader struct {
	outcome
	d     *doc
	ctx   substCtx
	subst func(string, *substCtx) (string, error)
	host  string
}

// outcome is what reading one server's entry comes to: the server, or
// the first reason to skip it. Every host's reader has one.
type outcome struct {
	e   *Entry
	s   *Server
	err error // the first reason to skip the server
}

func (o *outcome) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// endpoint checks that the server has a command or a URL, not both;
// neither says what it lacks. It reports whether the server is sound.
func (o *outcome) endpoint(neither string) bool {
	switch {
	case o.err != nil:
		return false
	case o.s.Command != "" && o.s.URL != "":
		o.fail(skipf("it has both a command and a URL"))
	case o.s.Command == "" && o.s.URL == "":
		o.fail(skipf("%s", neither))
	}
	return o.err == nil
}

// settle writes the outcome into the entry: the server, or why it was
// skipped.
func (o *outcome) settle() {
	if o.err == nil && isMCPX(o.s) {
		o.fail(skipf("it runs mcpx itself (mcpx install's entry): taking it into mcpx would loop"))
	}
	if o.err != nil {
		o.e.Server, o.e.Skipped = nil, o.err.Error()
		return
	}
	o.e.Server = o.s
}

// str reads m as a string with the host's variables mapped.
func (r *sreader) str(m member) (string, bool) {
	r.took(m.key)
	var s string
	if err := r.d.decode(m.val, &s); err != nil {
		r.fail(skipf("%s: want a string", m.key))
		return "", false
	}
	r.ctx.field = m.key
	out, err := r.subst(s, &r.ctx)
	if err != nil {
		r.fail(err)
		return "", false
	}
	return out, true
}

func (r *sreader) strs(m member) ([]string, bool) {
	r.took(m.key)
	var list []string
	if err := r.d.decode(m.val, &list); err != nil {
		r.fail(skipf("%s: want an array of strings", m.key))
		return nil, false
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		r.ctx.field = fmt.Sprintf("%s[%d]", m.key, i)
		v, err := r.subst(s, &r.ctx)
		if err != nil {
			r.fail(err)
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func (r *sreader) strMap(m member) (map[string]string, bool) {
	r.took(m.key)
	var raw map[string]string
	if err := r.d.decode(m.val, &raw); err != nil {
		r.fail(skipf("%s: want an object of strings", m.key))
		return nil, false
	}
	out := make(map[string]string, len(raw))
	for _, k := range sortedKeys(raw) {
		r.ctx.field = m.key + "." + k
		v, err := r.subst(raw[k], &r.ctx)
		if err != nil {
			r.fail(err)
			return nil, false
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, true
	}
	return out, true
}

func (r *sreader) boolean(m member) (bool, bool) {
	r.took(m.key)
	var b bool
	if err := r.d.decode(m.val, &b); err != nil {
		r.fail(skipf("%s: want true or false", m.key))
		return false, false
	}
	return b, true
}

// millis reads a number of milliseconds as an mcpx duration.
func (r *sreader) millis(m member) (string, bool) {
	r.took(m.key)
	var f float64
	if err := r.d.decode(m.val, &f); err != nil || f < 0 || math.IsInf(f, 0) {
		r.fail(skipf("%s: want a number of milliseconds", m.key))
		return "", false
	}
	return durationString(time.Duration(f * float64(time.Millisecond))), true
}

// took records that field key was read into the server.
func (r *sreader) took(key string) {
	if !contains(r.e.Taken, key) {
		r.e.Taken = append(r.e.Taken, key)
	}
}

// oauthSkip is why a host's OAuth settings are not taken: mcpx signs in
// to a server itself when the server asks for it, as the server's own
// client, not as the host's.
const oauthSkip = "mcpx signs in to the server itself when it asks (mcpx login NAME); a client the host registered is not carried over (the server's oauth block in mcpx's config takes one)"

// skip notes a field that is not taken, with the reason.
func (r *sreader) skip(m member, why string) {
	r.e.notef("%s: skipped: %s", m.key, why)
}

// unknown notes a field the host does not document.
func (r *sreader) unknown(m member) {
	r.e.notef("%s: skipped: not a field %s documents, so mcpx cannot tell what it means", m.key, r.host)
}

// durationString spells d as mcpx's config does: "90s", "5m", "1h30m".
func durationString(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	if d%time.Second != 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	s := d.String() // "1h30m0s"
	for _, suf := range []string{"m0s", "h0m"} {
		if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
			s = s[:len(s)-len(suf)+1]
		}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// finish checks the server has one transport; a skip reason wins.
func (r *sreader) finish() {
	s := r.s
	if r.endpoint(fmt.Sprintf("it has neither a command nor a URL that %s reads", r.host)) &&
		s.Cwd != "" && !filepath.IsAbs(s.Cwd) && !strings.HasPrefix(s.Cwd, "${") {
		if r.ctx.project == "" {
			r.fail(skipf("cwd %q is relative to the folder %s runs in, which mcpx cannot know", s.Cwd, r.host))
		} else {
			abs := filepath.Join(r.ctx.project, s.Cwd)
			r.e.notef("cwd: %q became %s, the project's folder joined with it", s.Cwd, abs)
			s.Cwd = literal(abs)
		}
	}
	r.settle()
}

// isMCPX reports whether s runs mcpx serve, as the entry mcpx install
// writes does.
func isMCPX(s *Server) bool {
	return filepath.Base(s.Command) == "mcpx" && contains(s.Args, "serve")
}
