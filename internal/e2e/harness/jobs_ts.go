package harness

import (
	"encoding/json"
)

// JobHostReport is what jobhost.mjs reports.
type JobHostReport struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	First TimedResult
	Retry TimedResult
	Polls []struct {
		Ms     int    `json:"ms"`
		Status string `json:"status"`
	} `json:"polls"`
	Final *TimedResult `json:"final"`
	// Asked: the questions the host was asked (with elicit).
	Asked []struct {
		Method   string          `json:"method"`
		Params   json.RawMessage `json:"params"`
		AfterJob bool            `json:"afterJob"`
	} `json:"asked"`
}

type TimedResult struct {
	Ms         int       `json:"ms"`
	Text       string    `json:"text"`
	IsError    bool      `json:"isError"`
	Structured *JobState `json:"structured"`
}
