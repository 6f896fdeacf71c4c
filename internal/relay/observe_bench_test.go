package relay

import (
	"sync/atomic"
	"testing"
	"time"
)

// countingObserver counts what it is told, as cheaply as an observer can.
type countingObserver struct{ started, ended, progress, waits atomic.Int64 }

func (o *countingObserver) CallStarted(CallInfo)                              { o.started.Add(1) }
func (o *countingObserver) CallEnded(CallInfo, Outcome, time.Duration, error) { o.ended.Add(1) }
func (o *countingObserver) ProgressAdvanced(CallInfo)                         { o.progress.Add(1) }
func (o *countingObserver) QueueWaited(string, time.Duration, bool)           { o.waits.Add(1) }

// BenchmarkCallToolObserved is BenchmarkCallTool with an observer
// listening: what observing costs the relay itself (the time, the
// outcome), beside BenchmarkCallTool's nobody-listens path.
func BenchmarkCallToolObserved(b *testing.B) {
	r := benchRelay(b)
	o := &countingObserver{}
	r.SetObserver(o)
	n := echoLoop(b, r)
	if o.started.Load() != n || o.ended.Load() != n {
		b.Fatalf("observer told of %d starts and %d ends of %d calls", o.started.Load(), o.ended.Load(), n)
	}
}
