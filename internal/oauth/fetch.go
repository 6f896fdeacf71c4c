package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
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
			return fmt.Errorf("%s: the response is %s, not JSON", what, mt)
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: the response is not the JSON expected: %w", what, err)
	}
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
