package hostjobs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"mcpx/internal/jobs"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcp"
	"mcpx/internal/relay"
)

// What a host is told of tasks on the wire, in both eras: the
// capabilities it is declared, the -32021 of a request only a host taking
// tasks may make, a 2026-07-28 DetailedTask, tasks/list's cursor; and the
// error an upstream's question of a job gets when the job cannot put it
// to its host.

// TasksCapability is what mcpx declares to a 2025-11-25 host that it may
// give tasks to.
var TasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// TasksExtension is the capabilities.extensions a 2026-07-28 host is told
// of when mcpx keeps jobs.
var TasksExtension = json.RawMessage(`{"` + mcp.ExtensionTasks + `":{}}`)

// TakesTasks reports whether a 2026-07-28 request's clientCapabilities
// name the tasks extension.
func TakesTasks(caps json.RawMessage) bool {
	// Capabilities that neither spell the extension's name nor escape
	// anything (which could spell it otherwise) cannot name it: most
	// hosts' are not parsed. Saves three allocations a 2026-07-28 call
	// (BenchmarkJobHardTimerHostModern, allocs/op, in internal/hostserver).
	if !bytes.Contains(caps, []byte(mcp.ExtensionTasks)) && bytes.IndexByte(caps, '\\') < 0 {
		return false
	}
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	_, ok := c.Extensions[mcp.ExtensionTasks]
	return ok
}

// NeedsTasks is the -32021 a request gets that only a host taking tasks
// may make.
func NeedsTasks(what string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredCapability,
		Message: "Missing required client capability: " + what + " needs the " + mcp.ExtensionTasks + " extension in the request's clientCapabilities",
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + mcp.ExtensionTasks + `":{}}}}`)}
}

// Detailed is a 2026-07-28 DetailedTask, the tasks/get result (or CreateTaskResult,
// without result and error).
type Detailed struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
	// InputRequests are an input_required task's questions.
	InputRequests map[string]relay.InputRequest `json:"inputRequests,omitempty"`
}

// EncodeCursor is the tasks/list cursor of the page from task n on;
// DecodeCursor reads it back.
func EncodeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("tasks:" + strconv.Itoa(n)))
}

func DecodeCursor(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(b, []byte("tasks:")) {
		return 0, fmt.Errorf("unknown cursor")
	}
	n, err := strconv.Atoi(string(b[len("tasks:"):]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("unknown cursor")
	}
	return n, nil
}

// JobError is the error an upstream's question of job c gets: it names
// the job, and says the job goes on.
func JobError(c *jobs.Call, method, why string) *jsonrpc.Error {
	id := c.ID()
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: CannotPut(method, id, why) + "; the job goes on without an answer",
		Data:    jsonrpc.MustMarshal(map[string]string{"jobId": id})}
}

// CannotPut says why mcpx cannot put a question (method) to the host of
// job id.
func CannotPut(method, id, why string) string {
	return fmt.Sprintf("mcpx cannot put this %s to the host of job %s: %s", method, id, why)
}
