package api

import "time"

// Quotas are a tenant's limits (docs/security.md). In a Tenant, the
// tenant's own overrides, 0 meaning the daemon's default; in
// Tenant.Effective, the values in force, 0 meaning unlimited.
type Quotas struct {
	ActiveSchedules      int64 `json:"active_schedules"`
	FiringsPerSecond     int64 `json:"firings_per_second"`
	Running              int64 `json:"running"`
	CatchUpPerSecond     int64 `json:"catch_up_per_second"`
	APIRequestsPerSecond int64 `json:"api_requests_per_second"`
	// RetentionSeconds is how long finished occurrences are kept, by
	// scheduled time (docs/retention.md); in Tenant.Effective, -1 means
	// kept forever.
	RetentionSeconds int64 `json:"retention_seconds"`
}

// QuotasPatch changes some of a tenant's quota overrides: an absent field
// is left as it is, 0 returns it to the daemon's default.
type QuotasPatch struct {
	ActiveSchedules      *int64 `json:"active_schedules,omitempty"`
	FiringsPerSecond     *int64 `json:"firings_per_second,omitempty"`
	Running              *int64 `json:"running,omitempty"`
	CatchUpPerSecond     *int64 `json:"catch_up_per_second,omitempty"`
	APIRequestsPerSecond *int64 `json:"api_requests_per_second,omitempty"`
	RetentionSeconds     *int64 `json:"retention_seconds,omitempty"`
}

// Tenant is a tenant as stored, with the quotas in force.
type Tenant struct {
	Name      string    `json:"name"`
	State     string    `json:"state"` // ACTIVE | DISABLED | DELETED
	Weight    int       `json:"weight"`
	Quotas    Quotas    `json:"quotas"`
	Effective Quotas    `json:"effective_quotas"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TenantList is a page of tenants: all of them, by name.
type TenantList struct {
	Tenants []Tenant `json:"tenants"`
}

// TenantRequest creates a tenant (POST /v1/tenants: Name required) or
// changes one (PATCH /v1/tenants/{name}: Name empty or the same). An
// absent Weight is 1 on create and unchanged on update.
type TenantRequest struct {
	Name   string      `json:"name,omitempty"`
	Weight *int        `json:"weight,omitempty"`
	Quotas QuotasPatch `json:"quotas"`
}

// TenantCreated answers a tenant's creation: the tenant and its first
// token, named "initial". The token is shown this once; the daemon keeps
// only its hash.
type TenantCreated struct {
	Tenant Tenant    `json:"tenant"`
	Token  string    `json:"token"`
	Info   TokenInfo `json:"token_info"`
}

// TokenInfo describes a token without the token itself, which the daemon
// does not keep.
type TokenInfo struct {
	Tenant     string     `json:"tenant"`
	Name       string     `json:"name"`
	Role       string     `json:"role"` // tenant | admin
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// TokenList is every token of a tenant, revoked ones too.
type TokenList struct {
	Tokens []TokenInfo `json:"tokens"`
}

// TokenRequest creates a token (POST /v1/tenants/{name}/tokens). Role is
// tenant (the default) or admin (only for the default tenant).
type TokenRequest struct {
	Name string `json:"name"`
	Role string `json:"role,omitempty"`
}

// TokenCreated answers a token's creation; Token is shown this once.
type TokenCreated struct {
	Token string    `json:"token"`
	Info  TokenInfo `json:"token_info"`
}

// Whoami answers GET /v1/whoami: who the request's credentials stand for.
type Whoami struct {
	Tenant string `json:"tenant"`
	Token  string `json:"token"` // the token's name; "" for the operator token or the Unix socket
	Role   string `json:"role"`
	Local  bool   `json:"local"` // over the daemon's Unix socket without a token
}
