package relay

import (
	"context"
	"io"
	"testing"

	"mcpx/internal/audit"
)

// BenchmarkCallToolAudited is BenchmarkCallTool with an audit log
// recording each call (to a discarding file sink): what recording costs
// the call's own path (its record and a copy of its arguments; the
// hash and the write are the log's writer's).
func BenchmarkCallToolAudited(b *testing.B) {
	r := benchRelay(b)
	l := audit.New(audit.Options{Sinks: []audit.Sink{audit.NewWriter(io.Discard)}, Queue: 1 << 20})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	r.SetAudit(l)
	n := echoLoop(b, r)
	cancel()
	<-done
	if s := l.Stats(); s.Written != n || s.Lost != 0 {
		b.Fatalf("the log wrote %d records of %d calls (%+v)", s.Written, n, s)
	}
}
