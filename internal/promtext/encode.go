package promtext

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// sample writes one line: name+suffix, the labels (names sorted, values
// in that order), an extra label (le or quantile) if extra is not empty,
// and the value.
func sample(b *bytes.Buffer, name, suffix string, labels []string, values *key, extra string, extraValue float64, v float64) {
	b.WriteString(name)
	b.WriteString(suffix)
	if len(labels) > 0 || extra != "" {
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l)
			b.WriteString(`="`)
			escape(b, values[i], true)
			b.WriteByte('"')
		}
		if extra != "" {
			if len(labels) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(extra)
			b.WriteString(`="`)
			float(b, extraValue)
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	float(b, v)
	b.WriteByte('\n')
}

// float writes f as the text format has it: Go's shortest 'g' form, and
// +Inf, -Inf, NaN.
func float(b *bytes.Buffer, f float64) {
	switch {
	case math.IsNaN(f):
		b.WriteString("NaN")
	case math.IsInf(f, +1):
		b.WriteString("+Inf")
	case math.IsInf(f, -1):
		b.WriteString("-Inf")
	default:
		var buf [32]byte
		b.Write(strconv.AppendFloat(buf[:0], f, 'g', -1, 64))
	}
}

// escape writes s with backslash and newline escaped, and the double
// quote too in a label value. Bytes that are not UTF-8 become U+FFFD:
// the page must be UTF-8, and a tool's name comes from whoever calls.
func escape(b *bytes.Buffer, s string, quote bool) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	start := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch c := s[i]; {
		case c == '\\':
			rep = `\\`
		case c == '\n':
			rep = `\n`
		case c == '"' && quote:
			rep = `\"`
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(rep)
		start = i + 1
	}
	b.WriteString(s[start:])
}

// help writes a HELP text.
func help(b *bytes.Buffer, s string) { escape(b, s, false) }
