package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// ReloadTZ asks the daemon to read its tz database again and to move the
// firings of the cron schedules whose zone's rules changed (admins only;
// SIGHUP does the same). The answer counts what moved, per zone.
func (c *Client) ReloadTZ(ctx context.Context) (*api.TZReload, error) {
	return call[api.TZReload](ctx, c, request{method: http.MethodPost, path: path("admin", "reload-tz")})
}
