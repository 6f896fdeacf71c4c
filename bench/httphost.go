package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// httpHost is a host on MCP's Streamable HTTP: a legacy session
// (initialize, then Mcp-Session-Id on every POST, notifications/cancelled
// to cancel), or stateless 2026-07-28 requests (_meta and headers on every
// POST; closing the response stream cancels).
type httpHost struct {
	url    string
	token  string // bearer token; "" for none
	modern bool
	hc     *http.Client
	sid    string // legacy session id
	ids    atomic.Int64
}

// modernMeta are the _meta members every 2026-07-28 request carries.
const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcpx-bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`

// legacyVersion is the revision legacy sessions ask for.
const legacyVersion = "2025-11-25"

func newHTTPHost(url, token string, modern bool) (*httpHost, error) {
	tr := &http.Transport{
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
	}
	h := &httpHost{url: url, token: token, modern: modern, hc: &http.Client{Transport: tr}}
	if modern {
		return h, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + legacyVersion +
		`","capabilities":{},"clientInfo":{"name":"mcpx-bench","version":"1"}}}`
	resp, err := h.post(ctx, []byte(body), nil)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	h.sid = resp.Header.Get("Mcp-Session-Id")
	c := newCall(0)
	h.read(resp, c)
	if c.err != nil {
		return nil, fmt.Errorf("initialize: %w", c.err)
	}
	if h.sid == "" {
		return nil, fmt.Errorf("initialize: no Mcp-Session-Id")
	}
	resp, err = h.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("notifications/initialized: HTTP %s", resp.Status)
	}
	return h, nil
}

// post sends one message; hdr adds headers. A status other than 2xx is
// an error carrying the body.
func (h *httpHost) post(ctx context.Context, body []byte, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	if h.sid != "" {
		req.Header.Set("Mcp-Session-Id", h.sid)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return resp, nil
}

func (h *httpHost) start(tool string, args []byte, o startOpts) (*call, error) {
	c := newCall(h.ids.Add(1))
	var hdr map[string]string
	meta := ""
	if h.modern {
		hdr = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
		meta = modernMeta
	}
	body := requestLine(c.id, tool, args, o, meta)
	ctx, cancel := context.WithCancel(context.Background())
	c.abandon = cancel
	if h.modern {
		c.cancel = func() time.Time {
			t := time.Now()
			cancel() // closes the request's stream: the 2026-07-28 cancel
			return t
		}
	} else {
		c.cancel = func() time.Time {
			t := time.Now()
			resp, err := h.post(context.Background(), cancelLine(c.id), nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			return t
		}
	}
	c.sent = time.Now()
	go func() {
		defer cancel()
		resp, err := h.post(ctx, body, hdr)
		if err != nil {
			c.finish(time.Now(), nil, err)
			return
		}
		h.read(resp, c)
	}()
	return c, nil
}

// read reads a response, JSON or SSE, to its end, and finishes c with the
// response whose id is c's.
func (h *httpHost) read(resp *http.Response, c *call) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			c.finish(time.Now(), nil, err)
			return
		}
		h.deliver(b, c, time.Now())
		c.finish(time.Now(), nil, errors.New("the response carried no JSON-RPC response"))
		return
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				h.deliver(data, c, time.Now())
				data = data[:0]
			}
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
	c.finish(time.Now(), nil, errors.New("the stream ended without a response"))
}

// deliver handles one message of c's response stream.
func (h *httpHost) deliver(b []byte, c *call, at time.Time) {
	var m envelope
	if json.Unmarshal(b, &m) != nil {
		return
	}
	switch {
	case m.Method == "notifications/progress":
		var p progressParams
		if json.Unmarshal(m.Params, &p) == nil {
			c.addProgress(p.Progress)
		}
	case m.Method == "" && m.ID != nil:
		if id, err := strconv.ParseInt(strings.TrimSpace(string(m.ID)), 10, 64); err != nil || id != c.id {
			return
		}
		if m.Error != nil {
			c.finish(at, nil, m.Error)
		} else {
			c.finish(at, m.Result, nil)
		}
	}
}

func (h *httpHost) close() {
	if h.sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
		if err == nil {
			req.Header.Set("Mcp-Session-Id", h.sid)
			req.Header.Set("Mcp-Protocol-Version", legacyVersion)
			if h.token != "" {
				req.Header.Set("Authorization", "Bearer "+h.token)
			}
			if resp, err := h.hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		cancel()
	}
	h.hc.CloseIdleConnections()
}
