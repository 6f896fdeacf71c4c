package sandbox

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Executable is the mcpx executable (it runs the children).
	Executable string
	// Memory is each child's memory limit in bytes; 0 is DefaultMemory.
	Memory int64
	// Warm is how many started children wait for a script; 0 is 2.
	Warm int
}

// Pool starts children and keeps some warm.
type Pool struct {
	exe  string
	mem  int64
	warm chan *proc
	need chan struct{}

	mu      sync.Mutex
	running bool               // Run reaps what ended (guarded by mu)
	ended   chan *proc         // children whose script is over, for Run to reap
	idle    map[*proc]struct{} // the warm children (guarded by mu)
}

// NewPool returns a pool; its Run keeps children warm.
func NewPool(o PoolOptions) *Pool {
	if o.Memory <= 0 {
		o.Memory = DefaultMemory
	}
	if o.Warm <= 0 {
		o.Warm = 2
	}
	return &Pool{exe: o.Executable, mem: o.Memory, warm: make(chan *proc, o.Warm), need: make(chan struct{}, 1),
		ended: make(chan *proc, 64), idle: map[*proc]struct{}{}}
}

// ErrNoExecutable is Exec's error on a pool with no executable.
var ErrNoExecutable = errors.New("scripts need the mcpx executable, and none was given")

// Run keeps the pool's warm children started, from the first script on,
// until ctx ends, then kills those still waiting. Without Run, each Exec
// starts its child then.
func (p *Pool) Run(ctx context.Context) error {
	if p.exe == "" {
		<-ctx.Done()
		return nil
	}
	p.mu.Lock()
	p.running = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = false
		p.mu.Unlock()
		for {
			select {
			case c := <-p.warm:
				p.setIdle(c, false)
				c.kill()
				c.end(0)
			case c := <-p.ended:
				c.end(stopGrace)
			default:
				return
			}
		}
	}()
	// Children are kept warm only once a script has run: a daemon whose
	// hosts never use code mode starts no child at all.
	wanted := false
	for {
		for wanted && len(p.warm) < cap(p.warm) {
			c, err := spawn(p.exe, p.mem)
			if err != nil {
				break // Exec will say why, starting its own
			}
			p.setIdle(c, true)
			select {
			case p.warm <- c:
			default:
				p.setIdle(c, false)
				c.kill()
				c.end(0)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-p.need:
			wanted = true
		case c := <-p.ended:
			c.end(stopGrace)
		}
	}
}

// release hands a child whose script is over to Run, which waits for it
// to exit (killing it after stopGrace) off the script's path, and then
// starts its replacement; without Run, it does so itself.
func (p *Pool) release(c *proc) {
	p.mu.Lock()
	if p.running {
		select {
		case p.ended <- c:
			p.mu.Unlock()
			p.refill()
			return
		default:
		}
	}
	p.mu.Unlock()
	c.end(stopGrace)
	p.refill()
}

// take returns a warm child, or starts one. The pool is refilled when a
// child is released, off the script's path, or now if take left it
// empty, so that scripts running side by side still find warm children.
func (p *Pool) take() (*proc, error) {
	if p.exe == "" {
		return nil, ErrNoExecutable
	}
	for {
		select {
		case c := <-p.warm:
			p.setIdle(c, false)
			if !c.alive() {
				c.end(0)
				continue
			}
			if len(p.warm) == 0 {
				p.refill()
			}
			return c, nil
		default:
			p.refill()
			return spawn(p.exe, p.mem)
		}
	}
}

func (p *Pool) refill() {
	select {
	case p.need <- struct{}{}:
	default:
	}
}

func (p *Pool) setIdle(c *proc, idle bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if idle {
		p.idle[c] = struct{}{}
	} else {
		delete(p.idle, c)
	}
}

// Idle returns the process ids of the warm children, which wait for a
// script: what the pool costs while no script runs.
func (p *Pool) Idle() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	pids := make([]int, 0, len(p.idle))
	for c := range p.idle {
		pids = append(pids, c.sp.PID())
	}
	slices.Sort(pids)
	return pids
}
