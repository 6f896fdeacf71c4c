package relay

import (
	"encoding/json"
	"strings"

	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
)

// progressValue returns the number in params' "progress" member.
func progressValue(params *jsonrpc.Object) (float64, bool) {
	raw, ok := params.Get("progress")
	if !ok || len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false // absent, or not a number (null would read as 0)
	}
	return jsonrpc.ParseNumber(raw)
}

// progressStatus returns a progress notification's total and message, for
// status, as decoding it into mcp.ProgressParams reads them: directly when
// each is absent, null or one member of its type; through encoding/json
// when anything is unusual (a duplicate, a wrong type, a name differing
// only in case, which encoding/json would also read).
func progressStatus(params *jsonrpc.Object) (total *float64, message string) {
	var rawTotal, rawMessage json.RawMessage
	nTotal, nMessage, odd := 0, 0, false
	for k, v := range params.Members() {
		switch {
		case k == "total":
			nTotal++
			rawTotal = v
		case k == "message":
			nMessage++
			rawMessage = v
		case strings.EqualFold(k, "total") || strings.EqualFold(k, "message"):
			odd = true
		}
	}
	if !odd && nTotal <= 1 && nMessage <= 1 {
		ok := true
		if rawTotal != nil && string(rawTotal) != "null" {
			v, good := jsonrpc.ParseNumber(rawTotal)
			total, ok = &v, good
		}
		if rawMessage != nil && string(rawMessage) != "null" {
			s, good := jsonrpc.Unquote(rawMessage)
			message, ok = s, ok && good
		}
		if ok {
			return total, message
		}
	}
	var p mcp.ProgressParams
	_ = json.Unmarshal(params.Bytes(), &p)
	return p.Total, p.Message
}
