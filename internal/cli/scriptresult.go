package cli

import (
	"encoding/json"
	"io"

	"mcpx/internal/apitype"
)

// scriptResult returns a script's tool result for a person: the value a
// script returned is its first text block, as JSON; a string reads better
// without its quotes and escapes ("Los Angeles" prints as Los Angeles).
// Anything else is returned as it is.
func scriptResult(raw json.RawMessage) json.RawMessage {
	var res map[string]json.RawMessage
	if json.Unmarshal(raw, &res) != nil {
		return raw
	}
	var content []map[string]json.RawMessage
	if json.Unmarshal(res["content"], &content) != nil || len(content) == 0 {
		return raw
	}
	var typ, text string
	if json.Unmarshal(content[0]["type"], &typ) != nil || typ != "text" || json.Unmarshal(content[0]["text"], &text) != nil {
		return raw
	}
	var value string
	if json.Unmarshal([]byte(text), &value) != nil {
		return raw // not a string: an object, a number, an error's words
	}
	content[0]["text"], _ = json.Marshal(value)
	res["content"], _ = json.Marshal(content)
	out, err := json.Marshal(res)
	if err != nil {
		return raw
	}
	return out
}

// printJobResult prints a job's result as call prints one, a script's as
// exec does.
func printJobResult(w io.Writer, j *apitype.Job) {
	raw := j.Result
	if isScriptJob(j) {
		raw = scriptResult(raw)
	}
	printResult(resultWriter{w: w, tty: isTerminal(w)}, raw)
}
