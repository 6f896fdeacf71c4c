package harness

import (
	"encoding/json"
)

// ExtTask is a 2026-07-28 CreateTaskResult or tasks/get result.
type ExtTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	TTLMs          *json.Number    `json:"ttlMs"`
	PollIntervalMs *json.Number    `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	RequestState *string `json:"requestState"`
}
