package client

import (
	"context"
	"fmt"
)

// WithActingTenant makes every request of the client act as tenant (the
// api.HeaderTenant header, Sched-Tenant), as WithTenant does for the
// requests of one context, which wins over it. It is for an admin who
// works as one tenant (schedctl's contexts have a tenant for it): schedd
// refuses it with 403 forbidden unless the token is an admin's or tenant
// is the token's own. "" acts as the token's own tenant.
func WithActingTenant(tenant string) Option { return func(o *options) { o.actAs = tenant } }

// tenantFor is the tenant a request with ctx acts as: WithTenant's, else
// WithActingTenant's; "" for the token's own.
func (c *Client) tenantFor(ctx context.Context) string {
	if t := tenantOf(ctx); t != "" {
		return t
	}
	return c.actAs
}

// checkActingTenant refuses a tenant that cannot be sent as a header
// value; schedd judges the rest.
func checkActingTenant(t string) error {
	for _, r := range t {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("acting tenant %q contains a space or a control character", t)
		}
	}
	return nil
}
