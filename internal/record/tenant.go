package record

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// DefaultTenant is the tenant every store starts with: the operator's own,
// whose admins manage the others. A request over the daemon's Unix socket
// without a token acts as its admin.
const DefaultTenant = "default"

// TenantState is the lifecycle state of a tenant.
type TenantState string

// Tenant states. A DISABLED tenant's tokens are refused and its schedules
// neither fire nor deliver until it is enabled again; a DELETED tenant is
// a tombstone: its tokens are revoked, its schedules canceled, its history
// kept, and its name is never given to another tenant (a new tenant of the
// same name would otherwise inherit the old one's history).
const (
	TenantActive   TenantState = "ACTIVE"
	TenantDisabled TenantState = "DISABLED"
	TenantDeleted  TenantState = "DELETED"
)

// Quotas are a tenant's limits. Zero in a field means the daemon's
// default for it (set by schedd's flags); a tenant's own value overrides
// it. Each is enforced across every node of a cluster.
type Quotas struct {
	// ActiveSchedules caps the schedules ACTIVE or PAUSED at once.
	ActiveSchedules int64
	// FiringsPerSecond is the token bucket at materialization: firings
	// past it are delayed (their scheduled_for and id unchanged), counted,
	// never dropped.
	FiringsPerSecond int64
	// Running caps the occurrences RUNNING at once; claims beyond it get
	// nothing for the tenant.
	Running int64
	// CatchUpPerSecond caps how fast catch-up firings after an outage are
	// released.
	CatchUpPerSecond int64
	// APIRequestsPerSecond caps API requests (429 with Retry-After).
	APIRequestsPerSecond int64
	// RetentionSeconds is how long the tenant's finished occurrences
	// are kept, by scheduled time, before retention removes them
	// (docs/retention.md); DEAD ones are kept until replayed or purged.
	RetentionSeconds int64
}

// Or returns q with each zero field taken from def.
func (q Quotas) Or(def Quotas) Quotas {
	pick := func(a, b int64) int64 {
		if a != 0 {
			return a
		}
		return b
	}
	return Quotas{
		ActiveSchedules:      pick(q.ActiveSchedules, def.ActiveSchedules),
		FiringsPerSecond:     pick(q.FiringsPerSecond, def.FiringsPerSecond),
		Running:              pick(q.Running, def.Running),
		CatchUpPerSecond:     pick(q.CatchUpPerSecond, def.CatchUpPerSecond),
		APIRequestsPerSecond: pick(q.APIRequestsPerSecond, def.APIRequestsPerSecond),
		RetentionSeconds:     pick(q.RetentionSeconds, def.RetentionSeconds),
	}
}

// MaxTenantWeight is the largest fairness weight a tenant may have.
const MaxTenantWeight = 1000

// Tenant is one team sharing a daemon: every schedule, occurrence, attempt
// and queue belongs to exactly one, and nothing of one is visible to
// another. Its ID is its name, chosen at creation and never reused.
type Tenant struct {
	ID    string
	State TenantState
	// Weight is its share of a worker pool claiming across tenants, 1 to
	// MaxTenantWeight: a tenant of weight 2 is served twice as much as
	// one of weight 1 while both have work waiting.
	Weight    int
	Quotas    Quotas
	CreatedAt time.Time
	UpdatedAt time.Time
	// Version grows by one with every change to the tenant (the audit
	// log's old and new version).
	Version int64
}

// Role is what a token may do.
type Role string

// Roles. A tenant token acts on its own tenant's schedules, occurrences
// and queues; an admin token (only of DefaultTenant) may also manage
// tenants and tokens, the cluster, simulated outages and what-if runs,
// audit every tenant, and act as another tenant.
const (
	RoleTenant Role = "tenant"
	RoleAdmin  Role = "admin"
)

// Token is one credential of a tenant. The token itself is shown once, at
// creation; the store keeps only its hash (TokenHash).
type Token struct {
	TenantID   string
	Name       string
	Hash       string // TokenHash of the token
	Role       Role
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used
	RevokedAt  time.Time // zero: valid
}

// TokenPrefix starts every token, so that a leaked one is recognisable
// (secret scanners match "sched_" followed by 52 base32 letters).
const TokenPrefix = "sched_"

// tokenBytes is a token's randomness: 256 bits.
const tokenBytes = 32

var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewToken mints a token from random (crypto/rand.Reader when nil):
// TokenPrefix and 256 random bits in lower-case base32.
func NewToken(random io.Reader) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	b := make([]byte, tokenBytes)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	return TokenPrefix + strings.ToLower(tokenEncoding.EncodeToString(b)), nil
}

// LooksLikeToken reports whether s has the shape NewToken gives.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != tokenEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := tokenEncoding.DecodeString(strings.ToUpper(rest))
	return err == nil
}

// TokenHash is what the store keeps of a token: its SHA-256 in hex. A
// token carries 256 random bits, so a fast hash is enough: there is
// nothing to guess from it, unlike a password.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}
