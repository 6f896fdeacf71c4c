package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/localclient"
)

// A Ctrl-C that comes before the daemon has named the call (its
// "started" event not read yet, as under load) cancels the call for the
// user once the name comes; it does not close the stream, which the
// daemon would take for the client leaving, an untrue reason upstream.
func TestInterruptBeforeStarted(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	cancels := make(chan string, 4)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req apitype.CancelRequest
		json.NewDecoder(r.Body).Decode(&req)
		cancels <- r.URL.Path + " " + req.Reason
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c := &localclient.Client{Socket: sock, Version: "test"}

	ctx, interrupt := context.WithCancel(context.Background())
	call := func(stream context.Context, onEvent func(apitype.CallEvent)) (*apitype.CallEvent, error) {
		interrupt() // Ctrl-C
		select {
		case <-stream.Done():
			t.Error("the stream was closed before the call was named: the daemon would take it for the client leaving")
			return nil, stream.Err()
		case <-time.After(200 * time.Millisecond): // nothing closes it meanwhile
		}
		onEvent(apitype.CallEvent{Type: "started", CallID: 7})
		select {
		case got := <-cancels:
			if want := "/v0/calls/7/cancel user"; got != want {
				t.Errorf("the daemon was asked %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Error("no cancel reached the daemon")
		}
		return nil, errors.New("cancelled")
	}
	var stderr bytes.Buffer
	err = runCall(ctx, &Env{Stdout: &bytes.Buffer{}, Stderr: &stderr}, c, "t", call, false, true)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitInterrupted {
		t.Errorf("runCall: %v, want the interrupted exit", err)
	}
}
