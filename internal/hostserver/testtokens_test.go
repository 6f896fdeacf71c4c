package hostserver

// testTokens maps each token to its name ("" for the default).
type testTokens map[string]string

func (tt testTokens) Match(tok string) (string, bool) {
	name, ok := tt[tok]
	return name, ok
}
