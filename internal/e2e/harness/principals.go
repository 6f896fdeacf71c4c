package harness

import (
	"context"
	"io"
)

// Raw sends a request and returns its status and body.
func (c *V1Client) Raw(method, path string, body any) (int, string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLong)
	defer cancel()
	resp := c.Do(ctx, method, path, body, nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
