package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// soak is the fault soak's state.
type soak struct {
	t interface {
		Log(...any)
		Logf(string, ...any)
		Errorf(string, ...any)
		Fatal(...any)
		Fatalf(string, ...any)
	}
	reps  []*replica
	front string // nginx's MCP endpoint, before both replicas
	token string

	mu                sync.Mutex
	jobs              []*soakJob
	calls, callsOK    int
	startFails        int
	partitions, kills int
	notes             []string
	lost              map[string]int // log lines of note, by replica
}

// soakJob is one job a host was told it had (a task created).
type soakJob struct {
	tag, tool, id string
	want          string // its result's text
	started       time.Time
	status        string // its end, as tasks/get reads it at last
	text          string // its result's text
	late          bool   // it carries a late result
}

func (s *soak) note(msg string) {
	s.mu.Lock()
	s.notes = append(s.notes, time.Now().Format("15:04:05")+" "+msg)
	s.mu.Unlock()
	s.t.Log(msg)
}

func (s *soak) logLine(name, l string) {
	if !strings.Contains(l, "lost its job leases") && !strings.Contains(l, "late result") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = map[string]int{}
	}
	k := name + ": lease lost"
	if strings.Contains(l, "late result") {
		k = name + ": late result kept"
	}
	s.lost[k]++
}

// post sends one 2026-07-28 request through nginx (which passes it to
// the other replica when one refuses the connection: it was not sent),
// once more if it fails and retry is set, and returns its answer's result
// or error. A call is never retried: a second try is a second call.
func (s *soak) post(ctx context.Context, retry bool, method, name string, params map[string]any) (json.RawMessage, *rpcError, error) {
	var err error
	for k := range 2 {
		if k > 0 && !retry {
			break
		}
		h := &httpClient{url: s.front, token: s.token}
		var body []byte
		body, err = h.post(ctx, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, name)
		if err != nil {
			continue
		}
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if err = json.Unmarshal(lastMessage(body), &m); err != nil {
			continue
		}
		return m.Result, m.Error, nil
	}
	if err == nil {
		err = fmt.Errorf("no answer")
	}
	return nil, nil, err
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// lastMessage is a JSON answer, or the last data of an SSE stream.
func lastMessage(b []byte) []byte {
	if len(b) > 0 && b[0] == '{' {
		return b
	}
	var last []byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(l, []byte("data:")); ok {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

var tasksExt = map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
	"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}

// jobWorker starts a job, reads it until it ends, and starts the next,
// until stop: half of them the demo's wait (not idempotent), half
// sleep_then (idempotent), 2 to 8 s each, tagged in _meta.
func (s *soak) jobWorker(w int, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		tool := "demo__wait"
		if rand.IntN(2) == 0 {
			tool = "demo__sleep_then"
		}
		tag := fmt.Sprintf("w%d-%d", w, n)
		secs := 2 + rand.IntN(7)
		meta := modernMeta(tasksExt)
		meta["soak/tag"] = tag
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, rerr, err := s.post(ctx, false, "tools/call", tool, map[string]any{"name": tool, "_meta": meta,
			"arguments": map[string]any{"seconds": secs, "text": tag}})
		cancel()
		var task struct {
			TaskID string `json:"taskId"`
		}
		if err != nil || rerr != nil || json.Unmarshal(res, &task) != nil || task.TaskID == "" {
			s.mu.Lock()
			s.startFails++
			s.mu.Unlock()
			time.Sleep(500 * time.Millisecond)
			continue
		}
		j := &soakJob{tag: tag, tool: strings.TrimPrefix(tool, "demo__"), id: task.TaskID, started: time.Now(), want: tag}
		if j.tool == "wait" {
			j.want = fmt.Sprintf("waited %d seconds", secs)
		}
		s.mu.Lock()
		s.jobs = append(s.jobs, j)
		s.mu.Unlock()
		s.await(j, time.Now().Add(2*time.Minute))
	}
}

// await reads j with tasks/get until it ends or deadline passes.
func (s *soak) await(j *soakJob, deadline time.Time) {
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, rerr, err := s.post(ctx, true, "tasks/get", j.id, map[string]any{"taskId": j.id, "_meta": modernMeta(tasksExt)})
		cancel()
		if err != nil || rerr != nil {
			continue
		}
		var d struct {
			Status string `json:"status"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
			Error         *rpcError `json:"error"`
			StatusMessage string    `json:"statusMessage"`
		}
		if json.Unmarshal(res, &d) != nil || d.Status == "working" || d.Status == "input_required" {
			continue
		}
		s.mu.Lock()
		j.status = d.Status
		if len(d.Result.Content) > 0 {
			j.text = d.Result.Content[0].Text
		}
		j.late = (d.Error != nil && strings.Contains(string(d.Error.Data), `"late"`)) || strings.Contains(d.StatusMessage, "lost its lease")
		s.mu.Unlock()
		return
	}
}

// callWorker makes plain calls (the demo's echo) until stop.
func (s *soak) callWorker(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, rerr, err := s.post(ctx, false, "tools/call", "demo__echo", map[string]any{"name": "demo__echo", "_meta": modernMeta(nil),
			"arguments": map[string]any{"text": "hi"}})
		cancel()
		s.mu.Lock()
		s.calls++
		if err == nil && rerr == nil && len(res) > 0 {
			s.callsOK++
		}
		s.mu.Unlock()
	}
}

// settle reads every job that has not ended yet until it does, then,
// once the replicas have had two lease terms to write the ends they
// hold, every job that ended without a result again: a late result
// comes after the job's end.
func (s *soak) settle() {
	deadline := time.Now().Add(3 * time.Minute)
	for _, j := range s.jobs {
		if j.status == "" {
			s.await(j, deadline)
		}
	}
	time.Sleep(2 * soakLease)
	for _, j := range s.jobs {
		if j.status != "" && j.status != "completed" {
			s.await(j, time.Now().Add(10*time.Second))
		}
	}
}
