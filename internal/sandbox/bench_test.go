package sandbox

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExecWarm runs a trivial script on the pool's warm children:
// the sandbox's share of a script's start to result.
//
//	go test -run '^$' -bench . ./internal/sandbox/
func BenchmarkExecWarm(b *testing.B) {
	exe := testExecutable(b)
	p := NewPool(PoolOptions{Executable: exe})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	h := &testHost{}
	for b.Loop() {
		// As a script arrives now and then: the pool has refilled.
		b.StopTimer()
		deadline := time.Now().Add(10 * time.Second)
		for len(p.warm) < cap(p.warm) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		b.StartTimer()
		res, err := p.Exec(context.Background(), Script{Code: "return 1", Prelude: prelude}, h)
		if err != nil || string(res.Value) != "1" {
			b.Fatal(res, err)
		}
	}
}
