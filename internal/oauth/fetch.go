package oauth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxBody bounds every response body mcpx reads in the
// authorization flow: metadata documents, registration and token answers.
const DefaultMaxBody = 256 << 10

// TooLargeError is a response over the body limit: mcpx read no further.
type TooLargeError struct {
	What  string // what was asked for
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the response is larger than %d bytes; mcpx read no further", e.What, e.Limit)
}

// readBounded reads body up to limit bytes; more is a *TooLargeError.
func readBounded(body io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Limit: limit}
	}
	return data, nil
}

// httpStatusError is a metadata request answered with a status that is not 200.
type httpStatusError struct {
	what   string
	status int
}

func (e *httpStatusError) Error() string {
	if e.status/100 == 3 {
		return fmt.Sprintf("%s: HTTP %d, a redirect to another origin, which mcpx does not follow", e.what, e.status)
	}
	return fmt.Sprintf("%s: HTTP %d %s", e.what, e.status, http.StatusText(e.status))
}

// getJSON fetches u and decodes its JSON body into v. A status other than
// 200 is an *httpStatusError.
func (c *Client) getJSON(ctx context.Context, u, what string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return &httpStatusError{what: what, status: resp.StatusCode}
	}
	return c.decode(resp, what, v)
}

// decode reads resp's bounded JSON body into v.
func (c *Client) decode(resp *http.Response, what string, v any) error {
	data, err := readBounded(resp.Body, c.maxBody(), what)
	if err != nil {
		return err
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return fmt.Errorf("%s: the response's Content-Type is not JSON", what)
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: the response is not the JSON expected (%s)", what, jsonFault(err))
	}
	return nil
}

// jsonFault says where a JSON document is wrong without quoting it: a
// server's text is never put in mcpx's errors.
func jsonFault(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		kind, _, _ := strings.Cut(te.Value, " ") // "number 5": the kind alone
		if te.Field != "" {
			return fmt.Sprintf("a %s where %s should be a %s", kind, te.Field, te.Type)
		}
		return fmt.Sprintf("a %s where a %s should be", kind, te.Type)
	}
	return "not valid JSON"
}

// unwrapURLError is a request's error without the URL net/http puts
// around it (the URL mcpx asked is named by the caller), and without
// what a server sent: an error of the connection, its TLS, its deadline
// or the body limit is kept, any other (a malformed answer, which
// net/http quotes) is said in mcpx's words.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var (
		op  *net.OpError
		ne  net.Error
		cv  *tls.CertificateVerificationError
		big *TooLargeError
	)
	switch {
	case errors.As(err, &op), errors.As(err, &ne) && ne.Timeout(), errors.As(err, &cv), errors.As(err, &big),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return err
	}
	return errMalformed
}

// errMalformed is an answer net/http could not read as HTTP.
var errMalformed = errors.New("the answer is not valid HTTP")
