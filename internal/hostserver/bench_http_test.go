package hostserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"mcpx/internal/hosthttp"
)

// BenchmarkRelayCallUpHTTP is BenchmarkRelayCall with the fixture on
// HTTP: mcpx finds it speaks 2026-07-28 and calls it statelessly, one POST
// per call. The fixture runs in a child process; the CPU counted is mcpx's
// (host face, relay, HTTP client) and the bench host's (a net.Pipe).
func BenchmarkRelayCallUpHTTP(b *testing.B) {
	benchEchoes(b, newPipeHost(b, benchServerHTTPUpstream(b)))
}

// BenchmarkRelayCallHTTP is one tools/call over Streamable HTTP in a
// legacy session: a POST answered with JSON.
func BenchmarkRelayCallHTTP(b *testing.B) {
	benchHTTP(b, false)
}

// BenchmarkRelayCallHTTPModern is one stateless 2026-07-28 tools/call.
func BenchmarkRelayCallHTTPModern(b *testing.B) {
	benchHTTP(b, true)
}

// BenchmarkHTTPFloor is what BenchmarkRelayCallHTTPModern costs without
// mcpx: the same bench client and requests, and net/http's server, whose
// handler reads the body and answers it back as JSON. The bench client's
// CPU and allocations are in every HTTP benchmark's figures; subtract this
// to see mcpx's share (which includes net/http's server, counted here too).
func BenchmarkHTTPFloor(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(ts.Close)
	benchHTTPCalls(b, ts.URL, true)
}

func benchHTTP(b *testing.B, modern bool) {
	s := benchServer(b)
	face := s.HTTP(nil)
	ts := httptest.NewServer(face.Handler(hosthttp.Access{}))
	b.Cleanup(func() {
		face.Close()
		ts.Close()
	})
	benchHTTPCalls(b, ts.URL, modern)
}

// benchHTTPCalls makes echo calls to url one at a time, as a legacy
// session or as stateless 2026-07-28 requests, and reports their cost.
func benchHTTPCalls(b *testing.B, url string, modern bool) {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	hc := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	post := func(body string, hdr map[string]string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return hc.Do(req)
	}
	hdr := map[string]string{}
	if modern {
		hdr = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "demo__echo"}
	} else {
		resp, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, nil)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		hdr["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
		hdr["Mcp-Protocol-Version"] = "2025-11-25"
	}
	meta := ""
	if modern {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	var n int64
	call := func() error {
		n++
		args := `{"n":` + strconv.FormatInt(n, 10) + `}`
		resp, err := post(`{"jsonrpc":"2.0","id":`+strconv.FormatInt(n, 10)+`,"method":"tools/call","params":{"name":"demo__echo","arguments":`+args+meta+`}}`, hdr)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		if err != nil {
			return err
		}
		if !bytes.Contains(body, []byte(args)) {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		return nil
	}
	if err := call(); err != nil { // starts the upstream
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}
