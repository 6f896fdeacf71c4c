package config

import (
	"errors"
	"fmt"
	"strings"
)

// expand replaces variable references in s, looked up with lookup:
//
//	${NAME}           the value of NAME; an error when NAME is unset
//	${NAME:-default}  the value of NAME, or default when NAME is unset or
//	                  empty; default is literal text up to the first "}"
//	$${               a literal "${"
//
// NAME is [A-Za-z_][A-Za-z0-9_]*. A "$" not followed by "{" stays as it is.
// The text is scanned once, left to right; expanded values are not scanned
// again. Errors name the variable, never a value.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += len("$${")
		case strings.HasPrefix(s[i:], "${"):
			ref, _, ok := strings.Cut(s[i+len("${"):], "}")
			if !ok {
				return "", errors.New(`unterminated "${" (write "$${" for a literal "${")`)
			}
			v, err := resolve(ref, lookup)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += len("${") + len(ref) + len("}")
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

// resolve returns the value of one reference, the text between "${" and "}".
func resolve(ref string, lookup func(string) (string, bool)) (string, error) {
	name, def, hasDef := strings.Cut(ref, ":-")
	if !isVarName(name) {
		return "", errors.New(`invalid variable reference (want ${NAME} or ${NAME:-default})`)
	}
	if strings.Contains(def, "${") {
		return "", fmt.Errorf("${%s:-...}: a default cannot contain \"${\"", name)
	}
	v, ok := lookup(name)
	switch {
	case hasDef && v == "":
		return def, nil
	case !ok:
		return "", fmt.Errorf("${%s} is not set", name)
	}
	return v, nil
}

func isVarName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !isWordByte(c) || c == '-' {
			return false
		}
	}
	return true
}
