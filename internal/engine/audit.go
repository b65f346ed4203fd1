package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sched-dev/sched/internal/clock"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// The audit log records every change of the control plane (schedules,
// triggers, replays and purges of the dead-letter queue, simulated
// outages) and of tenants and tokens: who made it (the actor of the
// request's context, ActorOf), what (an action and its target), when (the
// engine's clock) and the target's version before and after. A row is
// appended in the transaction of the change it records, so a change and
// its row commit together or not at all. A change that changes nothing (a
// pause of a paused schedule, a create or trigger answered from its
// idempotency key, a purge of an empty dead-letter queue) records nothing.
// Rows are never edited; they leave the log only by age
// (Config.AuditRetention).

// The actions of the audit log.
const (
	AuditScheduleCreate = "schedule.create"
	// AuditScheduleCreateBatch: one entry for a bulk create that made
	// several schedules; its target is their range of ids (batchAudit).
	AuditScheduleCreateBatch = "schedule.create_batch"
	AuditScheduleUpdate      = "schedule.update"
	AuditSchedulePause       = "schedule.pause"
	AuditScheduleResume      = "schedule.resume"
	AuditScheduleCancel      = "schedule.cancel"
	AuditScheduleTrigger     = "schedule.trigger"
	AuditReplay              = "occurrence.replay"
	AuditDLQReplay           = "dlq.replay"
	AuditDLQPurge            = "dlq.purge"
	AuditOutageStart         = "outage.start"
	AuditOutageCancel        = "outage.cancel"
	AuditTenantCreate        = "tenant.create"
	AuditTenantUpdate        = "tenant.update"
	AuditTenantEnable        = "tenant.enable"
	AuditTenantDisable       = "tenant.disable"
	AuditTenantDelete        = "tenant.delete"
	AuditTokenCreate         = "token.create"
	AuditTokenRevoke         = "token.revoke"
	AuditTargetCreate        = "target.create"
	AuditTargetUpdate        = "target.update"
	AuditTargetDelete        = "target.delete"
	// AuditScheduleRezone: a new tz database moved the schedule's firings
	// (tzreload.go); its version stays.
	AuditScheduleRezone = "schedule.rezone"
)

// DefaultAuditRetention is how long audit rows are kept when
// Config.AuditRetention is zero.
const DefaultAuditRetention = 90 * 24 * time.Hour

// auditPurgeEvery is how often a node deletes the audit rows older than
// the retention (after a stats flush, see maybePurge); auditPurgeBatch how many one statement deletes, and
// auditPurgeBatches how many statements one pass runs at most (the rest
// wait for the next pass), so a purge never holds the store long.
const (
	auditPurgeEvery   = 5 * time.Minute
	auditPurgeBatch   = 1000
	auditPurgeBatches = 100
)

// auditEntry is a change to record: appendAudit adds who and when.
type auditEntry struct {
	tenantID       string // the tenant acted upon
	action, target string
	oldVer, newVer int64
	detail         string
}

// appendAudit records e, made at now by the actor of ctx, in tx: the
// transaction of the change itself.
func appendAudit(ctx context.Context, tx store.AuditTx, now time.Time, e auditEntry) error {
	if err := tx.AppendAudit(ctx, auditRow(ctx, now, e)); err != nil {
		return fmt.Errorf("audit %s %s: %w", e.action, e.target, err)
	}
	return nil
}

// auditRow is the row that records e, made at now by the actor of ctx.
func auditRow(ctx context.Context, now time.Time, e auditEntry) store.AuditEntry {
	a := ActorOf(ctx)
	return store.AuditEntry{At: now.Truncate(time.Millisecond), TenantID: e.tenantID,
		ActorTenant: a.TenantID, ActorToken: a.Token, ActorAdmin: a.Admin, ActorLocal: a.Local,
		Action: e.action, Target: e.target, OldVersion: e.oldVer, NewVersion: e.newVer, Detail: auditText(e.detail)}
}

// auditText is s as a detail may hold it: valid UTF-8 without NUL or
// line breaks, at most store.MaxAuditDetail bytes.
func auditText(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r == 0 || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	if len(s) <= store.MaxAuditDetail {
		return s
	}
	cut := store.MaxAuditDetail - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Audit reads the audit log and keeps it to its retention. It is safe for
// concurrent use.
type Audit struct {
	store     store.Store
	clock     clock.Clock
	member    *member // the node's clock (now)
	log       *slog.Logger
	retention time.Duration // < 0: kept forever

	mu        sync.Mutex
	lastPurge time.Time // the engine's clock; zero: never
}

// AuditQuery selects audit rows. TenantID "" reads every tenant's (an
// admin's view); Schedule, when set, keeps the rows of one schedule: an
// id as is, or a name looked up among NameTenant's schedules (TenantID's
// when NameTenant is empty). Since keeps rows made at or after it;
// AfterID pages (the last id of the page before); Limit is
// store.ListLimit's.
type AuditQuery struct {
	TenantID   string
	NameTenant string
	Schedule   string
	Since      time.Time
	AfterID    int64
	Limit      int
}

// List returns the audit rows q selects, ascending by id. A Schedule
// name that names no schedule is ErrNotFound.
func (a *Audit) List(ctx context.Context, q AuditQuery) ([]store.AuditEntry, error) {
	p := store.ListAuditParams{TenantID: q.TenantID, Since: q.Since, AfterID: q.AfterID, Limit: q.Limit}
	if q.TenantID != "" {
		if err := schedule.CheckTenantRef(q.TenantID); err != nil {
			return nil, err
		}
	}
	if q.Schedule != "" {
		id, err := a.scheduleID(ctx, q)
		if err != nil {
			return nil, err
		}
		p.Target = id
	}
	rows, err := a.store.ListAudit(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	if p.Target != "" {
		if rows, err = a.withBatch(ctx, p, rows); err != nil {
			return nil, fmt.Errorf("read the audit log: %w", err)
		}
	}
	return rows, nil
}

// withBatch adds to rows, a page of one schedule's rows (p.Target), the
// entry of the bulk create that made the schedule, if one did: an
// AuditScheduleCreateBatch entry names the range of the ids it created
// (batchAudit), not each id, so the target's own rows do not hold it. A
// batch's ids share their time (record.NewScheduleIDs), so the entry's
// range starts between the lowest id of the schedule's millisecond and
// the schedule's id: one short range of the log's index of targets. The
// entry joins the page where its id puts it, under the page's bounds
// (after p.AfterID, at or after p.Since, p.Limit rows).
func (a *Audit) withBatch(ctx context.Context, p store.ListAuditParams, rows []store.AuditEntry) ([]store.AuditEntry, error) {
	floor, ok := record.ScheduleIDTimeFloor(p.Target)
	if !ok {
		return rows, nil
	}
	// Every range starting with p.Target sorts at or below "ID..~": an id
	// is lower case letters and digits, all below '~'.
	found, err := a.store.ListAuditTargets(ctx, store.AuditTargetRange{TenantID: p.TenantID,
		Action: AuditScheduleCreateBatch, From: floor, To: record.ScheduleIDRange(p.Target, "~")})
	if err != nil {
		return nil, err
	}
	added := false
	for _, e := range found {
		first, last, ok := record.ParseScheduleIDRange(e.Target)
		if !ok || p.Target < first || p.Target > last || e.ID <= p.AfterID || e.At.Before(p.Since) {
			continue
		}
		rows = append(rows, e)
		added = true
	}
	if !added {
		return rows, nil
	}
	slices.SortFunc(rows, func(x, y store.AuditEntry) int { return cmp.Compare(x.ID, y.ID) })
	return rows[:min(len(rows), store.ListLimit(p.Limit))], nil
}

// scheduleID resolves q.Schedule to a schedule id: a name of one of the
// tenant's schedules, else an id as given (rows are read by tenant too, so
// an id of another tenant's schedule finds none of its rows).
func (a *Audit) scheduleID(ctx context.Context, q AuditQuery) (string, error) {
	tenant := cmp.Or(q.NameTenant, q.TenantID, record.DefaultTenant)
	sc, err := a.store.GetScheduleByName(ctx, tenant, q.Schedule)
	switch {
	case err == nil:
		return sc.ScheduleID, nil
	case !errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("schedule %q: %w", q.Schedule, err)
	case record.IsScheduleID(q.Schedule):
		return q.Schedule, nil
	}
	return "", fmt.Errorf("schedule %q: %w", q.Schedule, ErrNotFound)
}

// Retention is how long rows are kept; negative: forever.
func (a *Audit) Retention() time.Duration { return a.retention }

// Purge deletes the rows older than the retention now (on the engine's
// clock), in batches of auditPurgeBatch, at most auditPurgeBatches of
// them, and returns how many it deleted. The background runs it every
// auditPurgeEvery (maybePurge); with a retention kept forever it does
// nothing.
func (a *Audit) Purge(ctx context.Context) (int, error) {
	if a.retention < 0 {
		return 0, nil
	}
	before := a.member.now().Add(-a.retention)
	total := 0
	for range auditPurgeBatches {
		n, err := a.store.PurgeAudit(ctx, before, auditPurgeBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("purge the audit log: %w", err)
		}
		if n < auditPurgeBatch {
			break
		}
	}
	return total, nil
}

// maybePurge runs Purge when auditPurgeEvery has passed on the engine's
// clock since it last did (or never did). The stats flush loop calls it
// after each flush, so the purge sleeps on no clock of its own.
func (a *Audit) maybePurge(ctx context.Context) {
	now := a.clock.Now()
	a.mu.Lock()
	due := a.lastPurge.IsZero() || now.Sub(a.lastPurge) >= auditPurgeEvery || now.Before(a.lastPurge)
	if due {
		a.lastPurge = now
	}
	a.mu.Unlock()
	if !due {
		return
	}
	if n, err := a.Purge(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("purge the audit log", "err", err)
	} else if n > 0 {
		a.log.Debug("audit rows past their retention deleted", "rows", n, "retention", a.retention)
	}
}

// auditRetention is cfg's retention: 0 is DefaultAuditRetention.
func auditRetention(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultAuditRetention
	}
	return d
}
