package catalog

import (
	"regexp"
	"strings"
)

// templatePattern compiles an RFC 6570 URI template into a regexp that
// matches the URIs it expands to. Literal text must match exactly; each
// expression matches what its operator may expand to: simple ({x}) and
// label/parameter expressions stop at "/", "?" and "#"; reserved ({+x})
// and fragment ({#x}) expansion match anything; path segments ({/x}) match
// "/"-led segments; queries ({?x} and {&x}) match the rest of a query. A
// template that cannot be read matches nothing.
func templatePattern(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for len(tmpl) > 0 {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		b.WriteString(regexp.QuoteMeta(tmpl[:open]))
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return nil
		}
		expr := tmpl[open+1 : open+end]
		tmpl = tmpl[open+end+1:]
		op := byte(0)
		if expr != "" && strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			op = expr[0]
		}
		switch op {
		case '+':
			b.WriteString(`.*?`)
		case '#':
			b.WriteString(`(?:#.*)?`)
		case '.':
			b.WriteString(`(?:\.[^/?#]*)*`)
		case '/':
			b.WriteString(`(?:/[^?#]*)?`)
		case ';':
			b.WriteString(`(?:;[^/?#]*)*`)
		case '?':
			b.WriteString(`(?:\?[^#]*)?`)
		case '&':
			b.WriteString(`(?:&[^#]*)?`)
		default:
			b.WriteString(`[^/?#]*`)
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return re
}
