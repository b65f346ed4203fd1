package client

import (
	"context"
	"net/http"

	"github.com/sched-dev/sched/api"
)

// Tenants and their tokens: an admin's calls (docs/security.md), but
// Whoami, which any credentials may ask.

// CreateTenant creates a tenant and its first token, returned this once
// (POST /v1/tenants).
func (c *Client) CreateTenant(ctx context.Context, req api.TenantRequest) (*api.TenantCreated, error) {
	return call[api.TenantCreated](ctx, c, request{method: http.MethodPost, path: path("tenants"), body: req})
}

// ListTenants returns every tenant (GET /v1/tenants).
func (c *Client) ListTenants(ctx context.Context) (*api.TenantList, error) {
	return call[api.TenantList](ctx, c, request{method: http.MethodGet, path: path("tenants")})
}

// GetTenant returns one tenant (GET /v1/tenants/{name}).
func (c *Client) GetTenant(ctx context.Context, name string) (*api.Tenant, error) {
	return call[api.Tenant](ctx, c, request{method: http.MethodGet, path: path("tenants", name)})
}

// UpdateTenant changes a tenant's weight and quota overrides; absent
// fields stay as they are (PATCH /v1/tenants/{name}).
func (c *Client) UpdateTenant(ctx context.Context, name string, req api.TenantRequest) (*api.Tenant, error) {
	return call[api.Tenant](ctx, c, request{method: http.MethodPatch, path: path("tenants", name), body: req})
}

// SetTenantEnabled enables or disables a tenant (POST
// /v1/tenants/{name}/enable or /disable): a disabled tenant's tokens are
// refused at once.
func (c *Client) SetTenantEnabled(ctx context.Context, name string, enabled bool) (*api.Tenant, error) {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	return call[api.Tenant](ctx, c, request{method: http.MethodPost, path: path("tenants", name, verb)})
}

// DeleteTenant deletes a tenant that has no active or paused schedules
// left (DELETE /v1/tenants/{name}); its name is never reused.
func (c *Client) DeleteTenant(ctx context.Context, name string) (*api.Tenant, error) {
	return call[api.Tenant](ctx, c, request{method: http.MethodDelete, path: path("tenants", name)})
}

// CreateToken mints a token for a tenant, returned this once (POST
// /v1/tenants/{name}/tokens).
func (c *Client) CreateToken(ctx context.Context, tenant string, req api.TokenRequest) (*api.TokenCreated, error) {
	return call[api.TokenCreated](ctx, c, request{method: http.MethodPost, path: path("tenants", tenant, "tokens"), body: req})
}

// ListTokens lists a tenant's tokens, revoked ones too (GET
// /v1/tenants/{name}/tokens).
func (c *Client) ListTokens(ctx context.Context, tenant string) (*api.TokenList, error) {
	return call[api.TokenList](ctx, c, request{method: http.MethodGet, path: path("tenants", tenant, "tokens")})
}

// RevokeToken revokes a tenant's token by name, at once on every node
// (POST /v1/tenants/{name}/tokens/{token}/revoke).
func (c *Client) RevokeToken(ctx context.Context, tenant, name string) (*api.TokenInfo, error) {
	return call[api.TokenInfo](ctx, c, request{method: http.MethodPost, path: path("tenants", tenant, "tokens", name, "revoke")})
}

// Whoami returns who the client's credentials stand for (GET /v1/whoami).
func (c *Client) Whoami(ctx context.Context) (*api.Whoami, error) {
	return call[api.Whoami](ctx, c, request{method: http.MethodGet, path: path("whoami")})
}
