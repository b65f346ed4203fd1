package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/target"
)

// TargetKinds checks and opens targets of every kind this node knows. The
// daemon passes the one in internal/target/kinds; the engine decides
// nothing about a kind's settings.
type TargetKinds interface {
	// Check validates a target's settings and returns them as they are
	// stored (defaults filled in) with its secret: the one given, one made
	// when the kind needs a secret and none was given, or "" for a kind
	// without one. Errors name the bad setting and never hold the secret.
	Check(kind record.TargetKind, config []byte, secret string) ([]byte, string, error)
	// Redact returns a kind's settings as they may be shown, with what
	// is secret in them (a header's value) hidden.
	Redact(kind record.TargetKind, config []byte) []byte
	// Open returns a sender that delivers to t.
	Open(t record.Target) (target.Sender, error)
}

// Targets manages a tenant's targets: the named places outside sched its
// schedules' firings can be delivered into (target.go in
// internal/target; the relay, relay.go, delivers them). A target's
// secret leaves the engine once, from the create (or update) that made
// it; every other answer carries SecretSet instead.
type Targets struct {
	store  store.Store
	member *member // the node's clock (now)
	kinds  TargetKinds
}

// TargetSpec is what a caller gives to create or update a target.
type TargetSpec struct {
	Kind   record.TargetKind
	Config []byte // the kind's settings, a JSON object
	// Secret is the signing key or password to keep; "" keeps the stored
	// one on an update, and makes one on a create when the kind needs one.
	Secret string
	// RotateSecret makes a new secret on an update (Secret must be "").
	RotateSecret bool
}

// TargetInfo is a target as shown: never its secret.
type TargetInfo struct {
	record.Target        // Secret always ""
	SecretSet     bool   // the target has a secret
	NewSecret     string // the secret a create or a rotation made or took: shown this once
}

func (t *Targets) now() time.Time { return t.member.now().Truncate(time.Millisecond) }

func (t *Targets) checkKinds() error {
	if t.kinds == nil {
		return fmt.Errorf("this node delivers to no target kinds: %w", ErrConflict)
	}
	return nil
}

// info is tg as shown: its secret cleared, its settings redacted.
func (t *Targets) info(tg *record.Target) *TargetInfo {
	i := &TargetInfo{Target: *tg, SecretSet: tg.Secret != ""}
	i.Secret = ""
	if t.kinds != nil {
		i.Config = t.kinds.Redact(tg.Kind, tg.Config)
	}
	return i
}

// Create stores a new target of a tenant. The answer's NewSecret is the
// target's secret, shown this once. A name the tenant already uses is
// ErrConflict.
func (t *Targets) Create(ctx context.Context, tenantID, name string, spec TargetSpec) (*TargetInfo, error) {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return nil, err
	}
	if err := schedule.CheckTargetName(name); err != nil {
		return nil, err
	}
	if err := t.checkKinds(); err != nil {
		return nil, err
	}
	if spec.RotateSecret {
		return nil, schedule.Invalid("rotate_secret", "only an update rotates a secret")
	}
	config, secret, err := t.kinds.Check(spec.Kind, spec.Config, spec.Secret)
	if err != nil {
		return nil, err
	}
	now := t.now()
	tg := &record.Target{TenantID: tenantID, Name: name, Kind: spec.Kind, Config: config, Secret: secret,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	err = store.InTx(ctx, t.store, func(tx store.Tx) error {
		if err := tx.InsertTarget(ctx, tg); err != nil {
			return err
		}
		return appendAudit(ctx, tx, now, auditEntry{tenantID: tenantID, action: AuditTargetCreate, target: name,
			newVer: 1, detail: string(spec.Kind)})
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, fmt.Errorf("tenant %q already has a target named %q: %w", tenantID, name, ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("create target %s: %w", name, err)
	}
	out := t.info(tg)
	out.NewSecret = secret
	return out, nil
}

// Get returns one of a tenant's targets, or ErrNotFound (another
// tenant's target of that name is not found either).
func (t *Targets) Get(ctx context.Context, tenantID, name string) (*TargetInfo, error) {
	tg, err := t.get(ctx, tenantID, name)
	if err != nil {
		return nil, err
	}
	return t.info(tg), nil
}

func (t *Targets) get(ctx context.Context, tenantID, name string) (*record.Target, error) {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return nil, err
	}
	if err := schedule.CheckTargetName(name); err != nil {
		return nil, err
	}
	tg, err := t.store.GetTarget(ctx, tenantID, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("target %q not found: %w", name, ErrNotFound)
	}
	return tg, err
}

// List returns a tenant's targets by name.
func (t *Targets) List(ctx context.Context, tenantID string) ([]TargetInfo, error) {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return nil, err
	}
	tgs, err := t.store.ListTargets(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	out := make([]TargetInfo, len(tgs))
	for i := range tgs {
		out[i] = *t.info(&tgs[i])
	}
	return out, nil
}

// Update replaces a target's settings (and its secret when spec gives
// one or asks for a rotation; otherwise the stored secret stays). The
// schedules that name it deliver with the new settings from their next
// batch on.
func (t *Targets) Update(ctx context.Context, tenantID, name string, spec TargetSpec) (*TargetInfo, error) {
	if err := t.checkKinds(); err != nil {
		return nil, err
	}
	if spec.RotateSecret && spec.Secret != "" {
		return nil, schedule.Invalid("rotate_secret", "give a secret or ask for a new one, not both")
	}
	for try := 0; ; try++ {
		cur, err := t.get(ctx, tenantID, name)
		if err != nil {
			return nil, err
		}
		keep := spec.Secret
		if keep == "" && !spec.RotateSecret && spec.Kind == cur.Kind {
			keep = cur.Secret
		}
		config, secret, err := t.kinds.Check(spec.Kind, spec.Config, keep)
		if err != nil {
			return nil, err
		}
		next := *cur
		next.Kind, next.Config, next.Secret, next.Version, next.UpdatedAt = spec.Kind, config, secret, cur.Version+1, t.now()
		err = store.InTx(ctx, t.store, func(tx store.Tx) error {
			if err := tx.UpdateTarget(ctx, &next, cur.Version); err != nil {
				return err
			}
			detail := string(next.Kind)
			if secret != cur.Secret {
				detail += ", new secret"
			}
			return appendAudit(ctx, tx, next.UpdatedAt, auditEntry{tenantID: tenantID, action: AuditTargetUpdate, target: name,
				oldVer: cur.Version, newVer: next.Version, detail: detail})
		})
		if errors.Is(err, store.ErrConflict) && try < updateConflictTries {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("update target %s: %w", name, err)
		}
		out := t.info(&next)
		if secret != cur.Secret {
			out.NewSecret = secret
		}
		return out, nil
	}
}

// Delete removes a target. One that schedules ACTIVE or PAUSED still
// name is ErrConflict (cancel them or give them another target first), and
// so is one whose queue still holds firings waiting for a delivery or
// being delivered (they are delivered, or go to the dead-letter queue,
// first): deleting must not silently stop work.
func (t *Targets) Delete(ctx context.Context, tenantID, name string) error {
	if _, err := t.get(ctx, tenantID, name); err != nil {
		return err
	}
	// What the target still owes is counted on the rows: the runs
	// holding its firings are folded first.
	if err := FoldTenant(ctx, t.store, tenantID); err != nil {
		return fmt.Errorf("delete target %s: %w", name, err)
	}
	var inUse, waiting int64
	queue := record.TargetQueue(name)
	err := store.InTx(ctx, t.store, func(tx store.Tx) error {
		var err error
		if inUse, err = tx.CountQueueSchedules(ctx, tenantID, queue); err != nil || inUse > 0 {
			return err
		}
		if waiting, err = tx.CountQueueWaiting(ctx, tenantID, queue); err != nil || waiting > 0 {
			return err
		}
		if err := tx.DeleteTarget(ctx, tenantID, name); err != nil {
			return err
		}
		return appendAudit(ctx, tx, t.now(), auditEntry{tenantID: tenantID, action: AuditTargetDelete, target: name})
	})
	if err != nil {
		return fmt.Errorf("delete target %s: %w", name, err)
	}
	if inUse > 0 {
		return fmt.Errorf("target %q is named by %d schedules ACTIVE or PAUSED: cancel them or give them another target first: %w",
			name, inUse, ErrConflict)
	}
	if waiting > 0 {
		return fmt.Errorf("target %q still owes %d firings (waiting, retrying or being delivered): they are delivered or go to the dead-letter queue first: %w",
			name, waiting, ErrConflict)
	}
	return nil
}

// Test sends one test firing to a tenant's target and reports how it
// went, as a webhook provider's "send test event" does. Its occurrence id
// is made for the test and names no occurrence; nothing is stored.
func (t *Targets) Test(ctx context.Context, tenantID, name string) (o target.Outcome, occurrenceID string, err error) {
	if err := t.checkKinds(); err != nil {
		return o, "", err
	}
	tg, err := t.get(ctx, tenantID, name)
	if err != nil {
		return o, "", err
	}
	s, err := t.kinds.Open(*tg)
	if err != nil {
		return o, "", fmt.Errorf("open target %s: %w", name, err)
	}
	defer s.Close()
	now := t.now()
	f := target.Firing{OccurrenceID: fmt.Sprintf("test_%d", now.UnixMilli()), TenantID: tenantID,
		ScheduledFor: now, Attempt: 1, Payload: []byte(`{"test":true}`)}
	return s.Send(ctx, []target.Firing{f})[0], f.OccurrenceID, nil
}

// checkTarget returns an error naming the target (the setting target)
// when a schedule of
// the tenant stored on queue would name a target the tenant does not have
// (another tenant's of that name included); nil for a queue of the
// built-in one.
func checkTarget(ctx context.Context, st store.Store, tenantID, queue string) error {
	name, ok := record.QueueTarget(queue)
	if !ok {
		return nil
	}
	_, err := st.GetTarget(ctx, tenantID, name)
	if errors.Is(err, store.ErrNotFound) {
		return schedule.Invalid("target", "%q: the tenant has no such target (schedctl target list shows its targets)", name)
	}
	return err
}

// targetGone reports whether queue is a target's whose tenant no longer
// has that target: a firing replayed there would wait for a relay that
// never comes.
func targetGone(ctx context.Context, st store.Store, tenantID, queue string) (bool, error) {
	name, ok := record.QueueTarget(queue)
	if !ok {
		return false, nil
	}
	_, err := st.GetTarget(ctx, tenantID, name)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	return false, err
}
