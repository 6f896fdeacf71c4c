package harness

import (
	"mcpx/internal/apitype"
)

// UntilEnd reads a call's events to its last: result, error or job.
func (s *CallStream) UntilEnd() (apitype.CallEvent, int) {
	s.T.Helper()
	progress := 0
	for {
		switch ev := s.Next(); ev.Type {
		case "progress":
			progress++
		case "result", "error", "job":
			return ev, progress
		default:
			s.T.Fatalf("unexpected event %+v", ev)
		}
	}
}
