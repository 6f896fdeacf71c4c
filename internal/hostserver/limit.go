package hostserver

import "sync"

// answeredSink is the sink of a request registered in the relay's
// registry: the request stops counting against its connection's limit of
// requests in flight (mcpx.maxCallsPerHost) as its answer is queued, not
// later, when its goroutine has wound down. A host that sends its next
// request as soon as it has an answer is then never refused for the one
// it was just answered.
type answeredSink struct {
	sink
	once     sync.Once
	answered func()
}

// pushAnswer queues a request's final message (its result or error) on
// out, as pushWhile does.
func pushAnswer(out sink, live func() bool, line []byte) {
	if a, ok := out.(*answeredSink); ok {
		a.once.Do(a.answered)
	}
	out.pushWhile(live, line)
}
