package relay

import (
	"fmt"
	"slices"

	"mcpx/internal/upstream"
)

// Bounds of the questions (elicitation, sampling, roots) one tool call's
// upstream may send its host: at once, and in all. A question past
// either is answered upstream with a QuestionLimitError, and the call
// ends with it: an upstream that asks without end is broken or hostile,
// and whoever made the call is told which bound it passed.
const (
	maxQuestionsInFlight = 16
	maxQuestionsPerCall  = 1000
)

// QuestionLimitError ends a call whose upstream passed a bound of its
// questions to the host.
type QuestionLimitError struct {
	Server  string
	Limit   int
	InTotal bool // the bound of questions in all, else of questions at once
}

func (e *QuestionLimitError) Error() string {
	if e.InTotal {
		return fmt.Sprintf("upstream %q asked the host more than %d questions (elicitation, sampling, roots) during one tool call, mcpx's bound of questions per call", e.Server, e.Limit)
	}
	return fmt.Sprintf("upstream %q asked the host more than %d questions (elicitation, sampling, roots) at once during one tool call, mcpx's bound of questions waiting at once", e.Server, e.Limit)
}

// admitLocked counts in, one more question of the call, and returns the
// bound it passes, if it does.
func (a *asks) admitLocked(in *upstream.Inbound) *QuestionLimitError {
	a.asked++
	a.open = slices.DeleteFunc(a.open, (*upstream.Inbound).Answered)
	switch {
	case a.asked > maxQuestionsPerCall:
		return &QuestionLimitError{Server: a.server, Limit: maxQuestionsPerCall, InTotal: true}
	case len(a.open) >= maxQuestionsInFlight:
		return &QuestionLimitError{Server: a.server, Limit: maxQuestionsInFlight}
	}
	a.open = append(a.open, in)
	return nil
}
