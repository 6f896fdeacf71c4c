package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"mcpx/internal/demo"
)

// What a job costs, on a path whose mcpx keeps jobs and knows the bench
// host's timer (inproc-job: a hard timer of jobHostTimer).
const (
	jobHostTimer = time.Second
	// jobPromoteAt is when mcpx answers such a host with a job: a fifth
	// of its timer before it fires.
	jobPromoteAt = jobHostTimer - jobHostTimer/5
	// jobWork is how long a call that becomes a job runs upstream.
	jobWork = 1500 * time.Millisecond
)

// jobRound is what the job figure measured on one path in one round.
type jobRound struct {
	// A background job: mcpx_call with background, answered with the job
	// at once; then mcpx_job, waiting, answered with the result.
	bgStart, bgResult []time.Duration
	bgCPU             time.Duration
	// A call that outlives the host's hard timer: answered with the job
	// (promoted, after jobPromoteAt), then mcpx_job polled until the result.
	promoted, lag []time.Duration // answer past jobPromoteAt; result after the upstream's end
	promCPU       time.Duration
}

var jobIDRe = regexp.MustCompile(`job_[a-z0-9]+`)

// jobs measures b.cfg.jobs background jobs and b.cfg.promoted calls that
// become jobs, one at a time.
func (b *bench) jobs(p *path, r *round) {
	jr := &jobRound{}
	r.jobs = jr
	pids := gatewayPIDs(p)
	cpu0 := cpuOf(pids)
	for range b.cfg.jobs {
		n := strconv.FormatInt(seq.Add(1), 10)
		c, res, err := p.jobCall("mcpx_call", []byte(`{"name":"`+p.tool("echo")+`","arguments":{"n":`+n+`},"background":true}`))
		id := jobIDRe.Find(res)
		if err != nil || id == nil {
			r.fail("background job: %v %.200s", err, res)
			return
		}
		jr.bgStart = append(jr.bgStart, c.latency())
		c, res, err = p.jobCall("mcpx_job", jobWaitArgs(id))
		if err != nil || !bytes.Contains(res, []byte(`\"n\":`+n)) {
			r.fail("job result: %v %.200s", err, res)
			return
		}
		jr.bgResult = append(jr.bgResult, c.latency())
	}
	jr.bgCPU = cpuOf(pids) - cpu0
	cpu0 = cpuOf(pids)
	secs := strconv.FormatFloat(jobWork.Seconds(), 'f', -1, 64)
	for range b.cfg.promoted {
		c, req, err := p.startWait("j-", secs)
		if err != nil {
			r.fail("job: %v", err)
			return
		}
		res, err := c.wait(10 * time.Second)
		id := jobIDRe.Find(res)
		if err != nil || id == nil {
			r.fail("job: no job for a call past the host's timer: %v %.200s", err, res)
			return
		}
		jr.promoted = append(jr.promoted, c.latency()-jobPromoteAt)
		for {
			c, res, err = p.jobCall("mcpx_job", jobWaitArgs(id))
			if err != nil {
				r.fail("job: %v", err)
				return
			}
			if bytes.Contains(res, []byte(`"running"`)) {
				continue
			}
			if !bytes.Contains(res, []byte("waited "+secs+" seconds")) {
				r.fail("job result: %.200s", res)
				return
			}
			break
		}
		e, err := p.tail.await(func(e *demo.Event) bool { return e.Event == demo.EventFinished && bytes.Equal(e.ID, req.ID) }, time.Second)
		if err != nil {
			r.fail("job: the upstream's end: %v", err)
			return
		}
		jr.lag = append(jr.lag, c.answered.Sub(at(e)))
	}
	jr.promCPU = cpuOf(pids) - cpu0
}

// jobRows are the job figure's table rows, one per path that has one.
func (rep *report) jobRows() [][]string {
	var rows [][]string
	for _, p := range rep.paths {
		var start, result, prom, lag []time.Duration
		var bgCPU, promCPU time.Duration
		var nbg, nprom int
		for _, r := range rep.results[p.id] {
			if r.jobs == nil {
				continue
			}
			j := r.jobs
			start, result = append(start, j.bgStart...), append(result, j.bgResult...)
			prom, lag = append(prom, j.promoted...), append(lag, j.lag...)
			bgCPU, promCPU = bgCPU+j.bgCPU, promCPU+j.promCPU
			nbg, nprom = nbg+len(j.bgStart), nprom+len(j.lag)
		}
		if nbg == 0 && nprom == 0 {
			continue
		}
		per := func(d time.Duration, n int) string {
			if n == 0 {
				return "-"
			}
			return fmtD(d / time.Duration(n))
		}
		rows = append(rows, []string{p.label,
			fmtD(percentile(start, 50)), fmtD(percentile(result, 50)), per(bgCPU, nbg),
			fmtD(percentile(prom, 50)), fmtD(percentile(prom, 100)), fmtD(percentile(lag, 50)), per(promCPU, nprom),
			fmt.Sprintf("%d, %d", nbg, nprom)})
	}
	return rows
}

// fmtD prints a duration as fmtUS does; "-" for a missing (negative) one.
func fmtD(d time.Duration) string { return fmtUS(us(d)) }

// printJobs prints the job figure's table, if any path measured it.
func (rep *report) printJobs(w io.Writer) {
	rows := rep.jobRows()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	t := &table{head: []string{"jobs (host timer " + jobHostTimer.String() + ", hard)", "background: start p50", "result p50", "CPU/job",
		"past the timer: job answer after " + jobPromoteAt.String() + ", p50", "max", "result after the upstream's end, p50", "CPU/job", "jobs (background, past the timer)"}, rows: rows}
	t.print(w, rep.cfg.markdown)
	fmt.Fprintln(w, "Background: mcpx_call with background (answered with the job), then mcpx_job waiting for its result; CPU/job is")
	fmt.Fprintln(w, "the gateway's for both requests and the job's store writes. Past the timer: a "+jobWork.String()+" silent call, answered with its")
	fmt.Fprintln(w, "job when the host's timer is a fifth from firing (how long after that the answer came), then mcpx_job polled until")
	fmt.Fprintln(w, "its result; CPU/job is the gateway's over the whole job, idle time included. jobs: how many of each, over the rounds.")
}

// jobCall calls tool on p and waits for its result, at most 10 s.
func (p *path) jobCall(tool string, args []byte) (*call, []byte, error) {
	c, err := p.h.start(tool, args, startOpts{})
	if err != nil {
		return nil, nil, err
	}
	res, err := c.wait(10 * time.Second)
	return c, res, err
}

// jobWaitArgs asks mcpx_job for job id's result, waiting for it 0.7 s.
func jobWaitArgs(id []byte) []byte {
	return []byte(`{"job_id":"` + string(id) + `","wait_seconds":0.7}`)
}
