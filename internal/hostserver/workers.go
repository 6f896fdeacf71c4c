package hostserver

import (
	"sync"
	"time"
)

// workers are handler goroutines shared by the host sessions of one
// HTTP face's 2026-07-28 requests. Each such request is a host session
// of its own, so the session's own handler goroutines (dispatch) would
// be new for every request, and every one would grow its stack on the
// way to the upstream again (see dispatch). A worker that ran one request's
// handler waits workerIdle for the next request of any session, keeping
// its stack, its idle timer and the channels it waits on. Saves a
// goroutine's stack growth per request (BenchmarkRelayCallHTTPModern,
// ns/op, in internal/hostserver).
//
// The session still counts the request in its handlers (its setClosing
// and handlers.Wait mean what they mean for a session's own goroutines);
// the workers themselves are counted in wg, and end once close is
// called: the face's Close (httpFace.Close) calls it after every live
// session's handlers have ended, when no session can hand a worker a
// request any more.
type workers struct {
	work chan work
	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool
}

// work is one request a worker executes, with its session: carried
// beside the request rather than in it, which keeps a request within a
// smaller size class. Saves 64 bytes a request (BenchmarkRelayCall, B/op,
// in internal/hostserver).
type work struct {
	hs  *hostSession
	req *request
}

func newWorkers() *workers {
	return &workers{work: make(chan work), stop: make(chan struct{})}
}

// dispatch executes req of hs, counted in hs.handlers by the caller, on a
// waiting worker or a new one. It never refuses: a session refuses requests once
// it is closing, before they get here.
func (p *workers) dispatch(hs *hostSession, req *request) {
	select {
	case p.work <- work{hs, req}:
		return
	default:
	}
	p.wg.Add(1)
	go p.loop(work{hs, req})
}

// loop executes w's request, then each one dispatch hands it, until it has waited
// workerIdle for one or the workers are closed. A request whose call
// became a job ends it: the worker was counted gone then.
func (p *workers) loop(w work) {
	var idle *time.Timer
	for {
		hs := w.hs
		if hs.execute(w.req) {
			if idle != nil {
				idle.Stop()
			}
			return
		}
		hs.handlers.Done()
		if idle == nil {
			idle = time.NewTimer(workerIdle)
		} else {
			idle.Reset(workerIdle)
		}
		select {
		case w = <-p.work:
		case <-p.stop:
			idle.Stop()
			p.wg.Done()
			return
		case <-idle.C:
			p.wg.Done()
			return
		}
	}
}

// release counts gone the worker executing a request its session
// released (hostSession.release): it runs on in the job its call became,
// and returns without counting itself (loop).
func (p *workers) release() { p.wg.Done() }

// close ends the waiting workers and waits for every worker to end.
func (p *workers) close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
	p.mu.Unlock()
	p.wg.Wait()
}
