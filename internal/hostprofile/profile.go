package hostprofile

import "time"

// Profile is one host's tool-call timer.
type Profile struct {
	// Name is the clientInfo.name the profile is for; "" for the default
	// given to a host that sent no name.
	Name string
	// Timeout is how long the host waits for a call's result: since the
	// request, or, when ResetOnProgress, since the last progress
	// notification it received for the call. 0 means no timer.
	Timeout time.Duration
	// ResetOnProgress: each progress notification under the call's
	// token restarts the host's timer.
	ResetOnProgress bool
	// Source says where the profile came from: SourceBuiltin,
	// SourceConfig or SourceDefault.
	Source string
}

// Where a profile came from.
const (
	SourceBuiltin = "builtin" // mcpx's table of known hosts
	SourceConfig  = "config"  // the config's mcpx.hosts block
	SourceDefault = "default" // a host mcpx does not know
)

// DefaultTimeout is the timer assumed of a host mcpx does not know: the
// TypeScript SDK's default request timeout (DEFAULT_REQUEST_TIMEOUT_MSEC
// in its shared protocol code), which most hosts are built on, and hard,
// as that SDK's resetTimeoutOnProgress is off unless a host turns it on.
// Assuming less of a host is safe: a host that waits longer, or resets on
// progress, loses nothing when mcpx acts early.
const DefaultTimeout = 60 * time.Second

// Default returns the profile of a host mcpx has no profile for.
func Default(name string) Profile {
	return Profile{Name: name, Timeout: DefaultTimeout, Source: SourceDefault}
}

// Override is what the config says of one host. A nil field keeps the
// value of the built-in profile, or of [Default] for a host mcpx does not
// know.
type Override struct {
	Timeout         *time.Duration
	ResetOnProgress *bool
}

// Lookup returns the profile of the host that sent clientInfo.name name:
// the built-in one, with what overrides says of name applied over it; a
// host with neither gets [Default]. overrides may be nil.
func Lookup(name string, overrides map[string]Override) Profile {
	p, ok := builtin[name]
	if ok {
		p.Name, p.Source = name, SourceBuiltin
	} else {
		p = Default(name)
	}
	if o, ok := overrides[name]; ok {
		if o.Timeout != nil {
			p.Timeout = *o.Timeout
		}
		if o.ResetOnProgress != nil {
			p.ResetOnProgress = *o.ResetOnProgress
		}
		p.Source = SourceConfig
	}
	return p
}

// Builtin returns the built-in profiles, sorted by name.
func Builtin() []Profile {
	out := make([]Profile, 0, len(builtin))
	for _, name := range builtinOrder {
		p := builtin[name]
		p.Name, p.Source = name, SourceBuiltin
		out = append(out, p)
	}
	return out
}
