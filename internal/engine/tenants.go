package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// ErrUnauthenticated: a token that names no one, was revoked, or belongs
// to a tenant that is disabled or deleted. Which of these it was is not
// said to the caller.
var ErrUnauthenticated = errors.New("engine: unknown, revoked or disabled token")

// Actor is who a request acts as: one tenant, through one of its tokens
// (its name), with that token's role. The server puts it in the request's
// context (WithActor); the engine reads it where it records who changed
// what.
type Actor struct {
	TenantID string
	// Token is the name of the token used; "" for the daemon's own
	// operator token or a local request over the Unix socket (Local).
	Token string
	Admin bool
	// Local: the request came over the daemon's Unix socket without a
	// token (the socket's owner, trusted as the admin of DefaultTenant).
	Local bool
}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf returns the actor ctx carries; without one, the local admin of
// DefaultTenant (work the daemon does on its own behalf, and tests).
func ActorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{TenantID: record.DefaultTenant, Admin: true, Local: true}
}

// QuotaError: a tenant's quota refused a request. It names the quota and
// its value; RetryAfter, when not zero, is when asking again may succeed.
type QuotaError struct {
	Tenant     string
	Quota      string // e.g. "active_schedules"
	Limit      int64
	Unit       string // e.g. "schedules", "requests/s"
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("tenant %q is at its %s quota of %d %s", e.Tenant, e.Quota, e.Limit, e.Unit)
}

// TenantPatch is what a caller sets on a tenant: its weight and quota
// overrides. A nil field is left as it is (on create: weight 1, the
// daemon's default quotas); a quota of 0 returns it to the default.
type TenantPatch struct {
	Weight               *int
	ActiveSchedules      *int64
	FiringsPerSecond     *int64
	Running              *int64
	CatchUpPerSecond     *int64
	APIRequestsPerSecond *int64
	// RetentionSeconds is the tenant's retention of finished history
	// (retention.go): 0 returns it to the daemon's default, else
	// MinTenantRetention or more.
	RetentionSeconds *int64
}

// Apply sets p's fields on t and checks the result: a weight from 1 to
// record.MaxTenantWeight, quotas from 0 to a billion. On an error t may be
// half changed; callers apply to a copy.
func (p TenantPatch) Apply(t *record.Tenant) error {
	p.apply(t)
	return checkTenant(t)
}

// apply sets p's fields on t.
func (p TenantPatch) apply(t *record.Tenant) {
	if p.Weight != nil {
		t.Weight = *p.Weight
	}
	for _, f := range []struct {
		to   *int64
		from *int64
	}{
		{&t.Quotas.ActiveSchedules, p.ActiveSchedules}, {&t.Quotas.FiringsPerSecond, p.FiringsPerSecond},
		{&t.Quotas.Running, p.Running}, {&t.Quotas.CatchUpPerSecond, p.CatchUpPerSecond},
		{&t.Quotas.APIRequestsPerSecond, p.APIRequestsPerSecond}, {&t.Quotas.RetentionSeconds, p.RetentionSeconds},
	} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
}

// tokenTouchEvery is how stale a token's recorded last use may get: a
// token used all day is written once a minute, not on every request.
const tokenTouchEvery = time.Minute

// tenantCacheTTL is how long a node reuses a tenant's row for its weight
// and quotas (not for authentication, which reads the store every time).
const tenantCacheTTL = 2 * time.Second

// Tenants manages tenants and their tokens and answers who a token is.
// Authentication reads the store on every request, so a revoked token or
// a disabled tenant is refused at once on every node; a tenant's weight
// and quotas are cached for tenantCacheTTL.
type Tenants struct {
	store    store.Store
	member   *member // the node's clock (now)
	defaults record.Quotas

	mu    sync.Mutex
	cache map[string]TenantLimits // nil: to be read
	read  time.Time
}

func (t *Tenants) now() time.Time { return t.member.now().Truncate(time.Millisecond) }

// Defaults returns the daemon's default quotas.
func (t *Tenants) Defaults() record.Quotas { return t.defaults }

// ensureDefault creates DefaultTenant if the store does not have it yet
// (a new store). Two nodes racing both succeed.
func (t *Tenants) ensureDefault(ctx context.Context) error {
	if _, err := t.store.GetTenant(ctx, record.DefaultTenant); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	now := t.now()
	d := record.Tenant{ID: record.DefaultTenant, State: record.TenantActive, Weight: 1, CreatedAt: now, UpdatedAt: now, Version: 1}
	err := store.InTx(ctx, t.store, func(tx store.Tx) error {
		if err := tx.InsertTenant(ctx, &d); err != nil {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: d.ID, action: AuditTenantCreate, target: d.ID, newVer: d.Version,
			detail: "the default tenant of a new store"})
	})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// Authenticate returns the actor a token stands for, or
// ErrUnauthenticated.
func (t *Tenants) Authenticate(ctx context.Context, token string) (Actor, error) {
	if !record.LooksLikeToken(token) {
		return Actor{}, ErrUnauthenticated
	}
	hash := record.TokenHash(token)
	tok, state, err := t.store.TokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return Actor{}, ErrUnauthenticated
	}
	if err != nil {
		return Actor{}, fmt.Errorf("authenticate: %w", err)
	}
	if !tok.RevokedAt.IsZero() || state != record.TenantActive {
		return Actor{}, ErrUnauthenticated
	}
	if now := t.now(); now.Sub(tok.LastUsedAt) >= tokenTouchEvery {
		// Best effort: a failed write of the last use does not refuse
		// the request.
		_ = t.store.TouchToken(ctx, hash, now)
	}
	return Actor{TenantID: tok.TenantID, Token: tok.Name, Admin: tok.Role == record.RoleAdmin}, nil
}

// Get returns a tenant in any state, or ErrNotFound.
func (t *Tenants) Get(ctx context.Context, id string) (*record.Tenant, error) {
	if err := schedule.CheckTenantRef(id); err != nil {
		return nil, err
	}
	return t.store.GetTenant(ctx, id)
}

// List returns every tenant, deleted ones too, by id.
func (t *Tenants) List(ctx context.Context) ([]record.Tenant, error) {
	return t.store.ListTenants(ctx)
}

// Limits returns a tenant's weight and its quotas with the daemon's
// defaults filled in, from the node's copy of the tenants (at most
// tenantCacheTTL old). A tenant the store does not know gets weight 1 and
// the defaults.
func (t *Tenants) Limits(ctx context.Context, id string) (weight int, q record.Quotas, err error) {
	all, err := t.limits(ctx)
	if err != nil {
		return 0, record.Quotas{}, err
	}
	if l, ok := all[id]; ok {
		return l.Weight, l.Quotas, nil
	}
	return 1, t.defaults, nil
}

// TenantLimits are a tenant's state, weight (at least 1) and the quotas in
// force (its own over the daemon's defaults).
type TenantLimits struct {
	State  record.TenantState
	Weight int
	Quotas record.Quotas
}

// limits returns every tenant's limits by id: the node's copy, read again
// from the store when it is tenantCacheTTL old or this node changed a
// tenant. One read of the (small) tenants table serves the API's rate
// limits, the planner's and the claims' quotas and the pool claims'
// weights alike.
func (t *Tenants) limits(ctx context.Context) (map[string]TenantLimits, error) {
	now := t.now()
	t.mu.Lock()
	all, read := t.cache, t.read
	t.mu.Unlock()
	if all != nil && now.Sub(read) < tenantCacheTTL && !now.Before(read) {
		return all, nil
	}
	ts, err := t.store.ListTenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenants' limits: %w", err)
	}
	all = make(map[string]TenantLimits, len(ts))
	for _, tn := range ts {
		all[tn.ID] = TenantLimits{State: tn.State, Weight: max(tn.Weight, 1), Quotas: tn.Quotas.Or(t.defaults)}
	}
	t.mu.Lock()
	t.cache, t.read = all, now
	t.mu.Unlock()
	return all, nil
}

// forget drops the node's copy of the tenants after this node changed one.
func (t *Tenants) forget() {
	t.mu.Lock()
	t.cache = nil
	t.mu.Unlock()
}

// checkTenant checks the weight and quotas a caller set on t.
func checkTenant(t *record.Tenant) error {
	if t.Weight < 1 || t.Weight > record.MaxTenantWeight {
		return schedule.Invalid("weight", "%d: must be 1 to %d", t.Weight, record.MaxTenantWeight)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"quotas.active_schedules", t.Quotas.ActiveSchedules}, {"quotas.firings_per_second", t.Quotas.FiringsPerSecond},
		{"quotas.running", t.Quotas.Running}, {"quotas.catch_up_per_second", t.Quotas.CatchUpPerSecond},
		{"quotas.api_requests_per_second", t.Quotas.APIRequestsPerSecond},
	} {
		if f.v < 0 || f.v > 1e9 {
			return schedule.Invalid(f.name, "%d: must be 0 (the daemon's default) to 1000000000", f.v)
		}
	}
	if r := t.Quotas.RetentionSeconds; r != 0 && (r < int64(MinTenantRetention/time.Second) || r > 1e9) {
		return schedule.Invalid("quotas.retention_seconds", "%d: must be 0 (the daemon's default) or %d to 1000000000",
			r, int64(MinTenantRetention/time.Second))
	}
	return nil
}

// Create stores a new ACTIVE tenant and its first token, named
// "initial", which it returns: the only time the token is seen. A name
// taken by any tenant, deleted ones too, is ErrConflict.
func (t *Tenants) Create(ctx context.Context, id string, p TenantPatch) (*record.Tenant, string, error) {
	if err := schedule.CheckNewTenant(id); err != nil {
		return nil, "", err
	}
	now := t.now()
	tn := &record.Tenant{ID: id, State: record.TenantActive, Weight: 1, CreatedAt: now, UpdatedAt: now, Version: 1}
	if err := p.Apply(tn); err != nil {
		return nil, "", err
	}
	token, tok, err := t.newToken(id, "initial", record.RoleTenant, now)
	if err != nil {
		return nil, "", err
	}
	err = store.InTx(ctx, t.store, func(tx store.Tx) error {
		if err := tx.InsertTenant(ctx, tn); err != nil {
			return err
		}
		if err := tx.InsertToken(ctx, tok); err != nil {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: id, action: AuditTenantCreate, target: id, newVer: tn.Version,
			detail: fmt.Sprintf("weight %d, first token %q", tn.Weight, tok.Name)})
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, "", fmt.Errorf("tenant %q exists (or existed: names of deleted tenants are not reused): %w", id, ErrConflict)
	}
	if err != nil {
		return nil, "", fmt.Errorf("create tenant %s: %w", id, err)
	}
	t.forget()
	return tn, token, nil
}

// Update changes a tenant's weight and quota overrides as p says. A
// deleted tenant is ErrNotFound.
func (t *Tenants) Update(ctx context.Context, id string, p TenantPatch) (*record.Tenant, error) {
	return t.change(ctx, id, AuditTenantUpdate, p.Apply, nil)
}

// SetEnabled enables or disables a tenant. A disabled tenant's tokens are
// refused at once; its schedules and occurrences stay as they are.
// DefaultTenant cannot be disabled (ErrConflict): the named admin tokens
// belong to it, so disabling it would turn away every admin but the
// operator token and the Unix socket, the only ones left to undo it.
func (t *Tenants) SetEnabled(ctx context.Context, id string, enabled bool) (*record.Tenant, error) {
	if !enabled && id == record.DefaultTenant {
		return nil, fmt.Errorf("tenant %q holds the admin tokens and cannot be disabled (revoke a token instead): %w", id, ErrConflict)
	}
	state, action := record.TenantDisabled, AuditTenantDisable
	if enabled {
		state, action = record.TenantActive, AuditTenantEnable
	}
	return t.change(ctx, id, action, func(tn *record.Tenant) error {
		tn.State = state
		return nil
	}, nil)
}

// Delete makes a tenant a tombstone: its tokens revoked, its name never
// reused. A tenant that still has ACTIVE or PAUSED schedules is
// ErrConflict (cancel them first): deleting must not silently stop work.
// DefaultTenant cannot be deleted.
func (t *Tenants) Delete(ctx context.Context, id string) (*record.Tenant, error) {
	if id == record.DefaultTenant {
		return nil, fmt.Errorf("tenant %q is the operator's own and cannot be deleted: %w", id, ErrConflict)
	}
	for _, st := range []record.ScheduleState{record.ScheduleActive, record.SchedulePaused} {
		live, err := t.store.ListSchedules(ctx, store.ListSchedulesParams{TenantID: id, State: st, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("delete tenant %s: %w", id, err)
		}
		if len(live) > 0 {
			return nil, fmt.Errorf("tenant %q still has %s schedules (%s, perhaps more): cancel them first: %w",
				id, st, live[0].ScheduleID, ErrConflict)
		}
	}
	return t.change(ctx, id, AuditTenantDelete, func(tn *record.Tenant) error {
		tn.State = record.TenantDeleted
		return nil
	}, func(tx store.Tx, now time.Time) error {
		_, err := tx.RevokeTokens(ctx, id, "", now)
		return err
	})
}

// change applies fn to a tenant not deleted and writes it as its next
// version, with also (when not nil) and the audit row of action in the
// same transaction.
func (t *Tenants) change(ctx context.Context, id, action string, fn func(*record.Tenant) error, also func(store.Tx, time.Time) error) (*record.Tenant, error) {
	if err := schedule.CheckTenantRef(id); err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		cur, err := t.store.GetTenant(ctx, id)
		if err != nil {
			return nil, err
		}
		if cur.State == record.TenantDeleted {
			return nil, fmt.Errorf("tenant %q was deleted: %w", id, ErrNotFound)
		}
		next := *cur
		if err := fn(&next); err != nil {
			return nil, err
		}
		now := t.now()
		next.UpdatedAt, next.Version = now, cur.Version+1
		err = store.InTx(ctx, t.store, func(tx store.Tx) error {
			if err := tx.UpdateTenant(ctx, &next, cur.Version); err != nil {
				return err
			}
			if also != nil {
				if err := also(tx, now); err != nil {
					return err
				}
			}
			return appendAudit(ctx, tx, now, auditEntry{tenantID: id, action: action, target: id,
				oldVer: cur.Version, newVer: next.Version, detail: fmt.Sprintf("%s, weight %d", next.State, next.Weight)})
		})
		if errors.Is(err, store.ErrConflict) && try < updateConflictTries {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("change tenant %s: %w", id, err)
		}
		t.forget()
		return &next, nil
	}
}

// CreateToken mints a new token for a tenant not deleted and returns it:
// the only time it is seen. Only DefaultTenant's tokens may be admins.
// A name one of the tenant's live tokens has is ErrConflict.
func (t *Tenants) CreateToken(ctx context.Context, tenantID, name string, role record.Role) (string, *record.Token, error) {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return "", nil, err
	}
	if err := schedule.CheckTokenName(name); err != nil {
		return "", nil, err
	}
	switch role {
	case "":
		role = record.RoleTenant
	case record.RoleTenant:
	case record.RoleAdmin:
		if tenantID != record.DefaultTenant {
			return "", nil, schedule.Invalid("role", "admin: only tokens of tenant %q may be admins", record.DefaultTenant)
		}
	default:
		return "", nil, schedule.Invalid("role", "%q: must be tenant or admin", role)
	}
	tn, err := t.store.GetTenant(ctx, tenantID)
	if err != nil {
		return "", nil, err
	}
	if tn.State == record.TenantDeleted {
		return "", nil, fmt.Errorf("tenant %q was deleted: %w", tenantID, ErrNotFound)
	}
	token, tok, err := t.newToken(tenantID, name, role, t.now())
	if err != nil {
		return "", nil, err
	}
	err = store.InTx(ctx, t.store, func(tx store.Tx) error {
		if err := tx.InsertToken(ctx, tok); err != nil {
			return err
		}
		return appendAudit(ctx, tx, tok.CreatedAt, auditEntry{tenantID: tenantID, action: AuditTokenCreate, target: name,
			detail: "role " + string(role)})
	})
	if errors.Is(err, store.ErrConflict) {
		return "", nil, fmt.Errorf("tenant %q already has a token named %q (revoke it first): %w", tenantID, name, ErrConflict)
	}
	if err != nil {
		return "", nil, fmt.Errorf("create token %s of %s: %w", name, tenantID, err)
	}
	return token, tok, nil
}

// Tokens lists a tenant's tokens, revoked ones too; never the tokens
// themselves, which are not stored.
func (t *Tenants) Tokens(ctx context.Context, tenantID string) ([]record.Token, error) {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return nil, err
	}
	if _, err := t.store.GetTenant(ctx, tenantID); err != nil {
		return nil, err
	}
	return t.store.ListTokens(ctx, tenantID)
}

// RevokeToken revokes a tenant's live token by name, at once on every
// node (each request reads the token's row). No live token of that name
// is ErrNotFound.
func (t *Tenants) RevokeToken(ctx context.Context, tenantID, name string) error {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return err
	}
	if name == "" {
		return schedule.Invalid("name", "must not be empty")
	}
	var n int
	err := store.InTx(ctx, t.store, func(tx store.Tx) (err error) {
		now := t.now()
		if n, err = tx.RevokeTokens(ctx, tenantID, name, now); err != nil || n == 0 {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: tenantID, action: AuditTokenRevoke, target: name,
			detail: fmt.Sprintf("%d revoked", n)})
	})
	if err != nil {
		return fmt.Errorf("revoke token %s of %s: %w", name, tenantID, err)
	}
	if n == 0 {
		return fmt.Errorf("tenant %q has no live token named %q: %w", tenantID, name, ErrNotFound)
	}
	return nil
}

func (t *Tenants) newToken(tenantID, name string, role record.Role, now time.Time) (string, *record.Token, error) {
	// Always crypto/rand: never Config.Rand, which a simulation seeds.
	token, err := record.NewToken(nil)
	if err != nil {
		return "", nil, err
	}
	return token, &record.Token{TenantID: tenantID, Name: name, Hash: record.TokenHash(token), Role: role, CreatedAt: now}, nil
}
