package jsonrpc

import "sync"

// Pending are the requests one side sent its peer and has not had
// answered, by id, each with the channel its answer goes to. The zero
// value is ready; it is safe for concurrent use.
type Pending struct {
	mu      sync.Mutex
	next    int64
	waiting map[string]chan *Message
}

// Add returns a fresh id, mint's for the next number of a count that
// starts at 1, and the channel the answer arrives on (it has room for
// it: Answer never waits). The caller removes the id once it stops
// waiting.
func (p *Pending) Add(mint func(n int64) ID) (ID, <-chan *Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[string]chan *Message{}
	}
	p.next++
	id := mint(p.next)
	ch := make(chan *Message, 1)
	p.waiting[id.String()] = ch
	return id, ch
}

// Remove forgets id.
func (p *Pending) Remove(id ID) {
	p.mu.Lock()
	delete(p.waiting, id.String())
	p.mu.Unlock()
}

// Answer hands a response to the request it answers, and reports whether
// one was waiting (else the response is late, or names an id never used).
func (p *Pending) Answer(m *Message) bool {
	p.mu.Lock()
	ch := p.waiting[m.ID.String()]
	delete(p.waiting, m.ID.String())
	p.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- m
	return true
}
