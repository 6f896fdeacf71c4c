package sock

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPeerUID(t *testing.T) {
	ln := listen(t, filepath.Join(shortDir(t), "d.sock"))
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := Dial(ctx, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var server net.Conn
	select {
	case server = <-accepted:
	case <-ctx.Done():
		t.Fatal("no connection accepted before the deadline")
	}
	if server == nil {
		t.Fatal("Accept failed")
	}
	defer server.Close()

	for name, c := range map[string]net.Conn{"server side": server, "client side": client} {
		uid, err := PeerUID(c)
		if err != nil || uid != os.Getuid() {
			t.Errorf("%s: PeerUID = %d, %v; want %d", name, uid, err, os.Getuid())
		}
		if err := CheckPeer(c); err != nil {
			t.Errorf("%s: CheckPeer = %v, want nil", name, err)
		}
	}
}

func TestCheckPeerNotASocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := CheckPeer(a); err == nil {
		t.Error("CheckPeer on a pipe = nil, want an error")
	}
}

func TestCheckUID(t *testing.T) {
	for _, tc := range []struct {
		peer, self int
		ok         bool
	}{
		{1000, 1000, true},
		{0, 1000, true},
		{1001, 1000, false},
		{1000, 0, false},
	} {
		if err := checkUID(tc.peer, tc.self); (err == nil) != tc.ok {
			t.Errorf("checkUID(%d, %d) = %v, want ok=%v", tc.peer, tc.self, err, tc.ok)
		}
	}
}
