package demo

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sync"
)

// EchoToolJSON is the echo tool's definition exactly as tools/list sends it:
// the literal below without its insignificant spaces.
// It holds what a lossy relay would break: unknown members at every level,
// "$schema", and an integer beyond 64 bits.
var EchoToolJSON = compact(`{
	"name": "echo",
	"title": "Echo",
	"description": "Returns its arguments unchanged: as text, and as structuredContent byte for byte.",
	"inputSchema": {
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"x-kw": [1, 2],
		"properties": {"n": {"type": "integer", "maximum": 12345678901234567890}},
		"additionalProperties": true
	},
	"annotations": {"readOnlyHint": true, "x-ann": "k"},
	"x-tool-ext": {"a": 1}
}`)

// RawResultJSON is the raw tool's result (the literal below without its
// insignificant spaces) exactly as sent to a legacy request
// (a modern one gets "resultType":"complete" appended): an unknown content
// type, a 20-digit integer, 1.0e+2 and an unknown top-level member.
var RawResultJSON = compact(`{
	"content": [
		{"type": "text", "text": "a result written as raw JSON"},
		{"type": "x-video", "uri": "x://v", "x-extra": {"n": 12345678901234567890}}
	],
	"structuredContent": {"big": 12345678901234567890, "hundred": 1.0e+2},
	"x-result-ext": {"k": [1, 2]},
	"isError": false
}`)

// toolDefsJSON holds the definitions of every tool but echo, by name:
// data, kept as JSON.
//
//go:embed tooldefs.json
var toolDefsJSON []byte

// toolDefs returns the definitions tools/list sends, by tool name, each
// compact and with every number spelled as written. Built on first use:
// every mcpx process links the demo, few run it.
var toolDefs = sync.OnceValue(func() map[string]string {
	var file map[string]json.RawMessage
	if err := json.Unmarshal(toolDefsJSON, &file); err != nil {
		panic("demo: bad tooldefs.json: " + err.Error())
	}
	defs := map[string]string{"echo": EchoToolJSON}
	for name, def := range file {
		defs[name] = compact(string(def))
	}
	return defs
})

// compact removes the insignificant spaces of a literal, keeping every
// number's spelling.
func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("demo: bad JSON literal: " + err.Error())
	}
	return b.String()
}
