package demo

import (
	"bytes"
	"encoding/json"
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

// Schemas of the arguments the tools share.
const (
	noArgs       = `{"type": "object", "properties": {}}`
	exportSchema = `{"type": "object", "properties": {
		"seconds": {"type": "number", "minimum": 0, "default": 4, "description": "how long the export takes, in seconds"},
		"steps": {"type": "integer", "minimum": 1, "default": 20, "description": "parts to export, one progress notification each"},
		"records": {"type": "integer", "minimum": 0, "default": 1000, "description": "records to export"}}}`
)

// toolDefs are the definitions tools/list sends, by tool name.
var toolDefs = map[string]string{
	"export": compact(`{"name": "export", "title": "Export records",
		"description": "Exports records in parts with live progress. Takes a few seconds; cancel it to stop the export.",
		"inputSchema": ` + exportSchema + `,
		"outputSchema": {"type": "object", "properties": {"records": {"type": "integer"}, "parts": {"type": "integer"}}, "required": ["records", "parts"]}}`),
	"scan": compact(`{"name": "scan", "title": "Scan files",
		"description": "Scans files without knowing how many there are: progress counts files and has no total. Cancellable.",
		"inputSchema": {"type": "object", "properties": {
			"seconds": {"type": "number", "minimum": 0, "default": 3, "description": "how long the scan takes, in seconds"},
			"steps": {"type": "integer", "minimum": 1, "default": 10, "description": "progress notifications, 7 files each"}}}}`),
	"stubborn": compact(`{"name": "stubborn", "title": "Stubborn task",
		"description": "Ignores cancellation on purpose: keeps sending progress and sends its result even after notifications/cancelled.",
		"inputSchema": {"type": "object", "properties": {
			"seconds": {"type": "number", "minimum": 0, "default": 2, "description": "how long it works, in seconds"},
			"steps": {"type": "integer", "minimum": 1, "default": 4, "description": "progress notifications"}}}}`),
	"wait": compact(`{"name": "wait", "title": "Wait silently",
		"description": "Waits without sending progress, then returns. Cancellable; shows an idle timeout firing.",
		"inputSchema": {"type": "object", "properties": {
			"seconds": {"type": "number", "minimum": 0, "default": 30, "description": "how long to wait, in seconds"}}}}`),
	"cancellations": compact(`{"name": "cancellations", "title": "Cancellations received",
		"description": "Returns every notifications/cancelled this server received: request id, reason, what it matched and when.",
		"inputSchema": ` + noArgs + `, "annotations": {"readOnlyHint": true}}`),
	"echo": EchoToolJSON,
	"burst": compact(`{"name": "burst", "title": "Progress burst",
		"description": "Sends count progress notifications back to back, then its result.",
		"inputSchema": {"type": "object", "properties": {
			"count": {"type": "integer", "minimum": 0, "default": 200, "description": "progress notifications to send"}}}}`),
	"raw": compact(`{"name": "raw", "title": "Raw result",
		"description": "Returns an unknown content type, a 20-digit integer, 1.0e+2 and an unknown member, to check that a relay keeps what it does not understand.",
		"inputSchema": ` + noArgs + `, "annotations": {"readOnlyHint": true}}`),
	"crash": compact(`{"name": "crash", "title": "Crash",
		"description": "Sends one progress notification, then ends the server process with an exit code. Cancellable until then.",
		"inputSchema": {"type": "object", "properties": {
			"code": {"type": "integer", "minimum": 0, "maximum": 255, "default": 3, "description": "exit code"},
			"after": {"type": "number", "minimum": 0, "default": 0.2, "description": "seconds to wait before exiting"}}},
		"annotations": {"destructiveHint": true}}`),
	"garbage": compact(`{"name": "garbage", "title": "Garbage line",
		"description": "Writes a line that is not JSON to its output, then answers normally.",
		"inputSchema": ` + noArgs + `}`),
	"fail": compact(`{"name": "fail", "title": "Failing tool",
		"description": "Always fails with a tool error (isError: true), not a protocol error.",
		"inputSchema": ` + noArgs + `}`),
	"log": compact(`{"name": "log", "title": "Log",
		"description": "Sends notifications/message at each level given that the log level admits, then says which went out (with -surface).",
		"inputSchema": {"type": "object", "properties": {
			"levels": {"type": "array", "items": {"type": "string"}, "description": "levels to log at"},
			"message": {"type": "string", "description": "the text of each message"}}}}`),
	"touch": compact(`{"name": "touch", "title": "Touch a resource",
		"description": "Sends notifications/resources/updated for a subscribed uri; with endListens, ends every subscriptions/listen as a server shutting down would; with grow, adds a resource and a prompt and says both lists changed (with -surface).",
		"inputSchema": {"type": "object", "properties": {
			"uri": {"type": "string", "description": "the resource that changed"},
			"endListens": {"type": "boolean", "description": "end every subscriptions/listen"},
			"grow": {"type": "boolean", "description": "add a resource and a prompt"}}}}`),
	"ask":   askToolJSON,
	"gated": gatedToolJSON,
	"sleep_then": compact(`{"name": "sleep_then", "title": "Sleep, then answer",
		"description": "Waits without sending progress, then returns the given text. Cancellable.",
		"inputSchema": {"type": "object", "properties": {
			"seconds": {"type": "number", "minimum": 0, "default": 1, "description": "how long to wait, in seconds"},
			"text": {"type": "string", "default": "done", "description": "the text to return"}}},
		"annotations": {"idempotentHint": true}}`),
}

// compact removes the insignificant spaces of a literal, keeping every
// number's spelling.
func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("demo: bad JSON literal: " + err.Error())
	}
	return b.String()
}
