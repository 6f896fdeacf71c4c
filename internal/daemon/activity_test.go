package daemon

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestIdleTimerQuiet: the quiet callback runs once the daemon has had
// nothing going on for quietAfter, once per such period: not again while
// nothing happens, again after a request, never while a call is in
// flight; the idle exit still fires after its own interval.
func TestIdleTimerQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newActivity()
		var calls, quiets atomic.Int32
		w := a.idleTimer(5*time.Minute, func() int { return int(calls.Load()) }, func() bool { return false }, func() { quiets.Add(1) })
		defer w.stop()
		request := func() {
			a.track(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		}

		time.Sleep(quietAfter - time.Second)
		synctest.Wait()
		if quiets.Load() != 0 {
			t.Fatalf("quiet ran %d times before quietAfter", quiets.Load())
		}
		time.Sleep(3 * time.Second) // past quietAfter and a tick
		synctest.Wait()
		if quiets.Load() != 1 {
			t.Fatalf("quiet ran %d times after quietAfter, want 1", quiets.Load())
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if quiets.Load() != 1 {
			t.Fatalf("quiet ran %d times in one quiet period, want 1", quiets.Load())
		}

		request()
		calls.Store(1) // a call in flight: not quiet, however long
		time.Sleep(2 * quietAfter)
		synctest.Wait()
		if quiets.Load() != 1 {
			t.Fatalf("quiet ran with a call in flight (%d)", quiets.Load())
		}
		calls.Store(0)
		request()
		time.Sleep(quietAfter + 3*time.Second)
		synctest.Wait()
		if quiets.Load() != 2 {
			t.Fatalf("quiet ran %d times after a second quiet period, want 2", quiets.Load())
		}
		select {
		case <-w.fired:
			t.Fatal("the idle exit fired before its interval")
		default:
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		select {
		case <-w.fired:
		default:
			t.Fatal("the idle exit did not fire after its interval")
		}
	})
}
