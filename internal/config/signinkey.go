package config

import (
	"path/filepath"
	"regexp"
	"sync"
)

// SignInKey names the key that seals the OAuth sign-ins kept in a shared
// store (the "mcpx.oauth" block): a file or an environment variable, never
// the key itself, which must not live in the database it protects. Its
// zero value names none.
type SignInKey struct {
	// File is the path of a file holding the key; Env the name of an
	// environment variable holding it. At most one is set.
	File string
	Env  string
	// PreviousFiles hold keys a sign-in may still be sealed with during a
	// rotation: read, never written with.
	PreviousFiles []string
}

// Named reports whether k names a key.
func (k SignInKey) Named() bool { return k.File != "" || k.Env != "" }

// envName is compiled on first use: start-up pays for no regular
// expression a process may never match.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// signInKey reads the "mcpx.oauth" block.
func (p *parser) signInKey(n *node, at path, k *SignInKey) error {
	f, err := p.object(n, at, []string{"keyFile", "keyEnv", "previousKeyFiles"})
	if err != nil {
		return err
	}
	if v, ok := f["keyFile"]; ok {
		if k.File, err = p.expanded(v, at.key("keyFile")); err != nil {
			return err
		}
		if !filepath.IsAbs(k.File) {
			return p.errorf(v.off, at.key("keyFile"), "must be an absolute path")
		}
	}
	if v, ok := f["keyEnv"]; ok {
		if k.Env, err = p.str(v, at.key("keyEnv")); err != nil {
			return err
		}
		if !envName().MatchString(k.Env) {
			return p.errorf(v.off, at.key("keyEnv"), "must be the name of an environment variable (letters, digits, _), not the key")
		}
		if k.File != "" {
			return p.errorf(v.off, at.key("keyEnv"), "name the key by keyFile or keyEnv, not both")
		}
	}
	if v, ok := f["previousKeyFiles"]; ok {
		if k.PreviousFiles, err = p.args(v, at.key("previousKeyFiles")); err != nil {
			return err
		}
		for _, f := range k.PreviousFiles {
			if !filepath.IsAbs(f) {
				return p.errorf(v.off, at.key("previousKeyFiles"), "must hold absolute paths")
			}
		}
		if !k.Named() && len(k.PreviousFiles) > 0 {
			return p.errorf(v.off, at.key("previousKeyFiles"), "needs keyFile or keyEnv: the key sign-ins are sealed with now")
		}
	}
	return nil
}
