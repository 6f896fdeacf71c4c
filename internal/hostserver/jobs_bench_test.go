package hostserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"mcpx/internal/jobs"
	"mcpx/internal/relay"
	"mcpx/internal/store"
)

// What a job costs over a plain call, in this process, against the demo
// fixture's echo (compare BenchmarkRelayCall):
//
//	go test -run '^$' -bench 'RelayCall$|Job' -benchmem ./internal/hostserver/

// benchJobs is a job manager over a SQLite store in a temporary
// directory, running until cleanup.
func benchJobs(b testing.TB, r *relay.Relay) *jobs.Manager {
	b.Helper()
	st, err := store.OpenSQLite(filepath.Join(b.TempDir(), store.FileName))
	if err != nil {
		b.Fatal(err)
	}
	m := jobs.New(jobs.Options{Store: st, Rerun: jobs.RelayRunner(r), Exclusive: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	<-m.Started()
	b.Cleanup(func() { cancel(); <-done; st.Close() })
	return m
}

// benchJobServer is benchServer with jobs on, and the bench host's
// profile (its clientInfo.name is "bench") as the config's hosts says.
func benchJobServer(b testing.TB, host map[string]any) *Server {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return benchServerOpts(b, map[string]any{"command": exe, "env": map[string]string{benchUpstreamEnv: "1"}},
		&Options{Jobs: &jobs.Manager{}}, map[string]any{"bench": host})
}

// BenchmarkJobStoreNoTimer is a plain call with jobs on: a host with no
// timer, whose calls never become jobs (what every call pays for jobs).
func BenchmarkJobStoreNoTimer(b *testing.B) {
	benchEchoes(b, newPipeHost(b, benchJobServer(b, map[string]any{"timeout": 0})))
}

// BenchmarkJobHardTimerHost is a call from a host with a hard timer that
// ends long before it: run as a call that may become a job (its own
// goroutine and context), never written.
func BenchmarkJobHardTimerHost(b *testing.B) {
	benchEchoes(b, newPipeHost(b, benchJobServer(b, map[string]any{"timeout": "60s", "resetOnProgress": false})))
}

var jobIDRe = regexp.MustCompile(`"job_id":"(job_[a-z0-9]+)"`)

// BenchmarkJobBackground is a whole job: mcpx_call with background (its
// row written before the answer), its end written, then one mcpx_job
// that waits for it and reads its result. Store writes per op reported.
func BenchmarkJobBackground(b *testing.B) {
	s := benchJobServer(b, map[string]any{"timeout": 0})
	h := newPipeHost(b, s)
	b.ReportAllocs()
	cpu := cpuTime()
	writes := s.opts.Jobs.Writes()
	for b.Loop() {
		line, err := h.call(`"method":"tools/call","params":{"name":"mcpx_call","arguments":{"name":"demo__echo","arguments":{"n":$ID},"background":true}}`, nil)
		if err != nil {
			b.Fatal(err)
		}
		m := jobIDRe.FindSubmatch(line)
		if m == nil {
			b.Fatalf("no job in %s", line)
		}
		line, err = h.call(`"method":"tools/call","params":{"name":"mcpx_job","arguments":{"job_id":"`+string(m[1])+`","wait_seconds":10}}`, nil)
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(line, []byte(`\"n\":`)) {
			b.Fatalf("job result %s", line)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(s.opts.Jobs.Writes()-writes)/float64(b.N), "writes/op")
}

// BenchmarkJobHardTimerHostModern is BenchmarkJobHardTimerHost from a
// 2026-07-28 host: each request names its host in its _meta.
func BenchmarkJobHardTimerHostModern(b *testing.B) {
	benchEchoes(b, newPipeHostEra(b, benchJobServer(b, map[string]any{"timeout": "60s", "resetOnProgress": false}), true))
}

// BenchmarkJobStoreNoTimerModern is BenchmarkJobStoreNoTimer from a
// 2026-07-28 host.
func BenchmarkJobStoreNoTimerModern(b *testing.B) {
	benchEchoes(b, newPipeHostEra(b, benchJobServer(b, map[string]any{"timeout": 0}), true))
}
