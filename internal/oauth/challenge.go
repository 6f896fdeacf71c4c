package oauth

import (
	"net/http"
	"strings"
)

// Challenge is the Bearer challenge of a WWW-Authenticate header (RFC 6750
// §3, RFC 9728 §5.1).
type Challenge struct {
	Error            string   // e.g. invalid_token, insufficient_scope
	ErrorDescription string   // the server's words; never shown as an instruction
	Scopes           []string // the scope parameter, split at spaces
	ResourceMetadata string   // the resource_metadata URL
}

// ParseChallenge returns the Bearer challenge among h's WWW-Authenticate
// headers, and whether there was one.
func ParseChallenge(h http.Header) (Challenge, bool) {
	for _, v := range h.Values("WWW-Authenticate") {
		for _, c := range parseChallenges(v) {
			if !strings.EqualFold(c.scheme, "Bearer") {
				continue
			}
			ch := Challenge{
				Error:            c.params["error"],
				ErrorDescription: c.params["error_description"],
				ResourceMetadata: c.params["resource_metadata"],
				Scopes:           strings.Fields(c.params["scope"]),
			}
			return ch, true
		}
	}
	return Challenge{}, false
}

type rawChallenge struct {
	scheme string
	params map[string]string
}

// parseChallenges splits one header value into its challenges (RFC 9110
// §11.6.1): a scheme, then comma-separated name=value parameters whose
// values are tokens or quoted strings. A token68 is skipped. Parameter
// names are case-insensitive; a repeated one keeps its first value.
func parseChallenges(s string) []rawChallenge {
	var out []rawChallenge
	i := 0
	for i < len(s) {
		i = skip(s, i, " \t,")
		tok, j := token(s, i)
		if tok == "" {
			i++ // a stray character: step over it
			continue
		}
		k := skip(s, j, " \t")
		if k < len(s) && s[k] == '=' && len(out) > 0 {
			// A parameter of the current challenge.
			v, next := value(s, skip(s, k+1, " \t"))
			name := strings.ToLower(tok)
			if _, dup := out[len(out)-1].params[name]; !dup {
				out[len(out)-1].params[name] = v
			}
			i = next
			continue
		}
		out = append(out, rawChallenge{scheme: tok, params: map[string]string{}})
		i = j
		// A token68 right after the scheme: skip it.
		if t, e := token(s, skip(s, i, " \t")); t != "" {
			e2 := e
			for e2 < len(s) && s[e2] == '=' {
				e2++
			}
			if after := skip(s, e2, " \t"); e2 > e && (after == len(s) || s[after] == ',') {
				i = after
			}
		}
	}
	return out
}

func skip(s string, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

// token returns the token (or token68 characters) at i and the index after it.
func token(s string, i int) (string, int) {
	j := i
	for j < len(s) && isTokenChar(s[j]) {
		j++
	}
	return s[i:j], j
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}

// value reads a token or a quoted string at i.
func value(s string, i int) (string, int) {
	if i < len(s) && s[i] == '"' {
		var b strings.Builder
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' && j+1 < len(s) {
				j++
			}
			b.WriteByte(s[j])
			j++
		}
		return b.String(), min(j+1, len(s))
	}
	return token(s, i)
}
