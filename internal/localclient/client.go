// Package localclient is the typed client of the daemon's local API, the
// only way the CLI reaches the daemon. It speaks apitype's wire types over
// the daemon's unix socket, and turns non-2xx answers into *DaemonError.
//
// A Client is safe for concurrent use; its zero value is not usable: set
// Socket, or Gateway and Token for a gateway's /v1 routes over HTTP, as
// the holder of Token.
package localclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"mcpx/internal/apitype"
	"mcpx/internal/sock"
)

// ErrNoDaemon means nothing answers on the socket.
var ErrNoDaemon = errors.New("no mcpx daemon is running")

// DaemonError is a non-2xx answer of the daemon.
type DaemonError struct {
	Status  int
	Message string
}

func (e *DaemonError) Error() string { return e.Message }

// Client talks to one daemon.
type Client struct {
	Socket  string
	Version string // sent to the daemon
	// Gateway, when set, is a gateway's HTTP base URL (its listener, or
	// its load balancer's), reached instead of Socket with Token as the
	// bearer token: only its /v1 routes answer there.
	Gateway, Token string

	once sync.Once
	hc   *http.Client
}

func (c *Client) http() *http.Client {
	c.once.Do(func() {
		if c.Gateway != "" {
			c.hc = &http.Client{Timeout: time.Minute}
			return
		}
		c.hc = &http.Client{Transport: &http.Transport{
			DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return c.dial(ctx) },
			DisableKeepAlives: false,
			MaxIdleConns:      2,
		}}
	})
	return c.hc
}

// dial connects to the socket and checks the daemon runs as this user.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	conn, err := sock.Dial(ctx, c.Socket)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (socket %s)", ErrNoDaemon, c.Socket)
		}
		return nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	if err := sock.CheckPeer(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	return conn, nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	base := "http://" + apitype.Host
	if c.Gateway != "" {
		base = strings.TrimSuffix(c.Gateway, "/")
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if c.Gateway != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set(apitype.HeaderVersion, c.Version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends a request and decodes a JSON answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return unwrapURL(err)
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func checkStatus(resp *http.Response) error {
	if resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusSwitchingProtocols {
		return nil
	}
	var e apitype.Error
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		e.Error = fmt.Sprintf("daemon answered %s", resp.Status)
	}
	return &DaemonError{Status: resp.StatusCode, Message: e.Error}
}

// Status returns the daemon's status.
func (c *Client) Status(ctx context.Context) (*apitype.Status, error) {
	var st apitype.Status
	return &st, c.do(ctx, http.MethodGet, apitype.PathStatus, nil, &st)
}

// Tools lists tools, or searches them when query is not empty.
func (c *Client) Tools(ctx context.Context, query string) (*apitype.Tools, error) {
	var t apitype.Tools
	return &t, c.do(ctx, http.MethodGet, apitype.PathTools+"?q="+url.QueryEscape(query), nil, &t)
}

// Cancel cancels call id; reason "user" is a person's interrupt.
func (c *Client) Cancel(ctx context.Context, id uint64, reason string) error {
	path := "/v0/calls/" + strconv.FormatUint(id, 10) + "/cancel"
	return c.do(ctx, http.MethodPost, path, apitype.CancelRequest{Reason: reason}, nil)
}

// Shutdown asks the daemon to stop.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, apitype.PathShutdown, nil, nil)
}

// Call runs a tool call, handing each event to onEvent as it arrives, and
// returns the final event ("result" or "error"). Cancelling ctx closes the
// stream, which the daemon takes as the client leaving.
func (c *Client) Call(ctx context.Context, req apitype.CallRequest, onEvent func(apitype.CallEvent)) (*apitype.CallEvent, error) {
	return c.stream(ctx, apitype.PathCall, req, onEvent)
}

// Exec runs a script in the daemon, as Call runs a tool: the same events,
// the result being the script's. Cancel with the started event's CallID
// stops it.
func (c *Client) Exec(ctx context.Context, req apitype.ExecRequest, onEvent func(apitype.CallEvent)) (*apitype.CallEvent, error) {
	return c.stream(ctx, apitype.PathExec, req, onEvent)
}

// stream posts body to path and reads the CallEvents of its answer.
func (c *Client) stream(ctx context.Context, path string, body any, onEvent func(apitype.CallEvent)) (*apitype.CallEvent, error) {
	hreq, err := c.newRequest(ctx, http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.http().Do(hreq)
	if err != nil {
		return nil, unwrapURL(err)
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for sc.Scan() {
		var ev apitype.CallEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("reading the call's events: %w", err)
		}
		if onEvent != nil {
			onEvent(ev)
		}
		if ev.Type == "result" || ev.Type == "error" {
			return &ev, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the call's events: %w", err)
	}
	return nil, errors.New("the daemon ended the call's stream without a result")
}

// Reload asks the daemon to re-read its config file, expanding its
// ${VAR}s with env (which may be nil) over the daemon's environment.
func (c *Client) Reload(ctx context.Context, env map[string]string) (*apitype.ReloadResult, error) {
	var res apitype.ReloadResult
	return &res, c.do(ctx, http.MethodPost, apitype.PathReload, apitype.ReloadRequest{Env: env}, &res)
}

// Jobs lists the daemon's jobs, newest first.
func (c *Client) Jobs(ctx context.Context) (*apitype.Jobs, error) {
	var j apitype.Jobs
	return &j, c.do(ctx, http.MethodGet, apitype.PathJobs, nil, &j)
}

// Job returns job id, waiting up to wait for it to end.
func (c *Client) Job(ctx context.Context, id string, wait time.Duration) (*apitype.Job, error) {
	var j apitype.Job
	path := "/v0/jobs/" + url.PathEscape(id)
	if wait > 0 {
		path += "?wait=" + strconv.FormatFloat(wait.Seconds(), 'f', 3, 64)
	}
	return &j, c.do(ctx, http.MethodGet, path, nil, &j)
}

// CancelJob cancels job id and returns it as it is then.
func (c *Client) CancelJob(ctx context.Context, id string) (*apitype.Job, error) {
	var j apitype.Job
	return &j, c.do(ctx, http.MethodPost, "/v0/jobs/"+url.PathEscape(id)+"/cancel", nil, &j)
}

// StartJob starts a call in the background, as a job, and returns it.
func (c *Client) StartJob(ctx context.Context, req apitype.CallRequest) (*apitype.Job, error) {
	var j apitype.Job
	return &j, c.do(ctx, http.MethodPost, apitype.PathJobs, req, &j)
}

// StartExecJob starts a script in the background, as a job, and returns
// it.
func (c *Client) StartExecJob(ctx context.Context, req apitype.ExecRequest) (*apitype.Job, error) {
	req.Background = true
	var j apitype.Job
	return &j, c.do(ctx, http.MethodPost, apitype.PathExec, req, &j)
}

// Restart asks the daemon to restart upstream server name.
func (c *Client) Restart(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, "/v0/servers/"+url.PathEscape(name)+"/restart", nil, nil)
}

// UILink asks the daemon for a one-time link to its live view.
func (c *Client) UILink(ctx context.Context) (string, error) {
	var res apitype.UILink
	err := c.do(ctx, http.MethodPost, apitype.PathUILink, nil, &res)
	return res.URL, err
}

// Audit returns the audit log's records that query selects (its keys
// are GET apitype.PathV1Audit's), newest first.
func (c *Client) Audit(ctx context.Context, query url.Values) (*apitype.AuditRecords, error) {
	var a apitype.AuditRecords
	path := apitype.PathV1Audit
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return &a, c.do(ctx, http.MethodGet, path, nil, &a)
}

// RevokeSignIn revokes and forgets a principal's own sign-in to a
// per-person server: the caller's when principal is "" (the operator
// names anyone's).
func (c *Client) RevokeSignIn(ctx context.Context, server, principal string) (*apitype.SignOut, error) {
	path := strings.Replace(apitype.PathV1SignIn, "{server}", url.PathEscape(server), 1)
	if principal != "" {
		path += "?principal=" + url.QueryEscape(principal)
	}
	var out apitype.SignOut
	return &out, c.do(ctx, http.MethodDelete, path, nil, &out)
}
