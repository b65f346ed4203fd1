package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// CPUProfile records the daemon's CPU profile for d (whole seconds, at
// least one) and writes it, in pprof's format, to w. It needs an admin;
// the call lasts d, so the client's own timeout, if any, must be longer.
func (c *Client) CPUProfile(ctx context.Context, d time.Duration, w io.Writer) error {
	secs := max(int(d.Round(time.Second)/time.Second), 1)
	r := request{method: http.MethodGet, path: "/debug/pprof/profile", query: url.Values{"seconds": {strconv.Itoa(secs)}}}
	resp, err := c.send(ctx, r, "application/octet-stream")
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("cpu profile: %w", c.transportError(ctx, r, err))
	}
	return nil
}
