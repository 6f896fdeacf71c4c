package hostserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"mcpx/internal/config"
	"mcpx/internal/jobs"
	"mcpx/internal/jobs/jobstest"
	"mcpx/internal/principal"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// TestListJobsFiltered: a filtered host's job list skips the jobs of its
// principal it may not see, however many come between those it may, and
// reading one of those is an unknown id.
func TestListJobsFiltered(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"mcpx": {"hosts": {"one": {"tools": ["demo__*"]}}}}`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := jobstest.Start(t)
	ctx := t.Context()

	srv := &Server{relay: relay.New(cfg, nil, nil, nil), opts: Options{Jobs: m}}
	hs := &hostSession{srv: srv, id: "http-1", clientName: "one", who: principal.DefaultToken()} // a default-token HTTP host
	start := func(server string) string {
		t.Helper()
		c, err := m.Start(ctx, jobs.Spec{Principal: hs.jobPrincipal(), Server: server, Tool: "echo", Key: jobs.NewID()},
			jobs.Now(func(context.Context, *jobs.Call) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }))
		if err != nil {
			t.Fatal(err)
		}
		return c.ID()
	}
	older := start("demo")
	var hidden []string
	for range 40 {
		hidden = append(hidden, start("secret"))
	}
	newer := start("demo")

	req := &request{}
	req.asker.hs = hs
	got, err := req.asking().List(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range got {
		ids = append(ids, j.ID)
	}
	slices.Sort(ids)
	want := []string{newer, older}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("listJobs(2) = %v, want %v", ids, want)
	}
	if got, _ := req.asking().List(ctx, 1); len(got) != 1 || got[0].Server != "demo" {
		t.Errorf("listJobs(1) = %v, want one job of demo's", got)
	}
	if _, err := req.asking().Read(ctx, principal.ReadJob, hidden[0]); !errors.Is(err, store.ErrUnknown) {
		t.Errorf("reading a hidden job: %v, want %v", err, store.ErrUnknown)
	}
	if j, err := req.asking().Read(ctx, principal.ReadJob, older); err != nil || j.ID != older {
		t.Errorf("reading a job of an allowed tool: %v %v", j, err)
	}
	if err := req.asking().MayRead(ctx, principal.CancelJob, hidden[0]); !errors.Is(err, store.ErrUnknown) {
		t.Errorf("may read a hidden job: %v, want %v", err, store.ErrUnknown)
	}
	hs.clientName = "" // no filter: sees them all
	if err := req.asking().MayRead(ctx, principal.CancelJob, hidden[0]); err != nil {
		t.Errorf("may read, without a filter: %v", err)
	}
	if all, err := req.asking().List(ctx, 100); err != nil || len(all) != 42 {
		t.Errorf("without a filter, listJobs = %d jobs, %v; want 42", len(all), err)
	}
}
