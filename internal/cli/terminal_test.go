package cli

import "testing"

// TestTerminalSafe: control characters (C0, DEL, C1) become spaces; with
// lines, newlines and tabs stay; other text is untouched.
func TestTerminalSafe(t *testing.T) {
	in := "a\x1b]52;c;aGk=\x07b\r\nc\td\x7f\u009b2Jé"
	if got, want := terminalSafe(in, true), "a ]52;c;aGk= b \nc\td  2Jé"; got != want {
		t.Errorf("lines: %q, want %q", got, want)
	}
	if got, want := terminalSafe(in, false), "a ]52;c;aGk= b  c d  2Jé"; got != want {
		t.Errorf("one line: %q, want %q", got, want)
	}
}
