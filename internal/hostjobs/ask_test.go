package hostjobs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpx/internal/jobs"
	"mcpx/internal/jobs/jobstest"
)

// resultHost is the Host of a 2026-07-28 host's call: jobResult asks it
// nothing else.
type resultHost struct{ Host }

func (resultHost) IsTask() bool { return false }
func (resultHost) Modern() bool { return true }

// TestJobResult: a job whose call ended with an upstream's input_required
// that its host could not be put (a 2026-07-28 host's) keeps a tool error
// naming the job and the question instead; any other result is kept as
// it is.
func TestJobResult(t *testing.T) {
	m := jobstest.Start(t)
	c, err := m.Start(context.Background(), jobs.Spec{Principal: jobs.LocalPrincipal, Server: "demo", Tool: "ask_later", Key: "k"}, jobs.Adopted(func(error) {}, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Finish(json.RawMessage(`{}`), nil)
	l := &Link{Host: resultHost{}}
	ir := json.RawMessage(`{"resultType":"input_required","inputRequests":{"q0":{"method":"elicitation/create","params":{"mode":"form","message":"?"}}},"requestState":"s"}`)
	got := string(l.jobResult(c, ir))
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "the upstream asked for input, and the job ended: mcpx cannot put this elicitation/create to the host of job "+c.ID()) ||
		!strings.Contains(got, "2026-07-28") {
		t.Fatalf("jobResult = %s", got)
	}
	for _, res := range []string{`{"content":[{"type":"text","text":"input_required"}]}`, `{"content":[],"resultType":"complete"}`} {
		if got := string(l.jobResult(c, json.RawMessage(res))); got != res {
			t.Errorf("jobResult(%s) = %s", res, got)
		}
	}
}
