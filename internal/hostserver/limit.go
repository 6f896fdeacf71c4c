package hostserver

import (
	"sync"

	"mcpx/internal/relay"
)

// answeredSink is the sink of a request registered in the relay's
// registry: the request stops counting against its connection's limit of
// requests in flight (mcpx.maxCallsPerHost) as its answer is queued, not
// later, when its goroutine has wound down. A host that sends its next
// request as soon as it has an answer is then never refused for the one
// it was just answered.
type answeredSink struct {
	sink
	once  sync.Once
	reg   *relay.Registry
	entry *relay.Entry
}

// answered takes the request out of the registry.
func (a *answeredSink) answered() { a.reg.Remove(a.entry) }

// pushAnswer queues a request's final message (its result or error) on
// out, as pushWhile does. The request leaves the registry in the same step,
// under the queue's lock, and only if the answer is queued: a cancel that
// finds the request gone therefore comes after its answer on the wire, and
// one that comes first silences the answer. (Leaving before the push let a
// host's cancel miss the request, its next request be answered, and the
// cancelled call's result follow that answer.)
func pushAnswer(out sink, live func() bool, line []byte) {
	a, ok := out.(*answeredSink)
	if !ok {
		out.pushWhile(live, line)
		return
	}
	out.pushWhile(func() bool {
		if live != nil && !live() {
			return false
		}
		a.once.Do(a.answered)
		return true
	}, line)
}
