package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// MaxBatch is the most items one CreateBatch takes: a batch is one
// transaction, which holds SQLite's one writer (and on PostgreSQL the
// tenant's quota lock) while it runs, so it must stay short.
const MaxBatch = 1000

// batchConflictTries is how many times a batch's transaction is run when
// a concurrent create took one of its names or keys between the batch's
// read and its inserts (PostgreSQL: the unique index refuses the insert
// and aborts the transaction; the next try, under the tenant's quota lock,
// reads the winner and answers that item from it). Two batches that share
// names can also wait on each other's inserts: a batch inserts in shard
// order (below), not name order, so each may hold a name the other needs;
// PostgreSQL aborts one as a deadlock (or a wait past its lock timeout),
// and that one is tried again the same way. SQLite's one writer never
// races. After the last try the batch fails whole (ErrConflict or
// ErrBusy); nothing of it was written, so sending it again is safe.
const batchConflictTries = 3

// BatchItem is one schedule of a bulk create: its settings as a caller
// gives them, and an optional idempotency key (see Create).
type BatchItem struct {
	IdempotencyKey string
	Settings       schedule.Settings
}

// BatchOutcome is what became of one BatchItem: the schedule stored
// (Created true) or found under the item's idempotency key with the same
// body (Created false), or the error Create would have given the item
// alone (a *schedule.ValidationError, ErrConflict, a *QuotaError).
type BatchOutcome struct {
	Schedule *record.Schedule
	Created  bool
	Err      error
}

// CreateBatch creates many schedules of one tenant, each by the rules of
// Create, in one store transaction of a few multi-row statements: the
// inserts of every schedule admitted and its first version row, and one
// audit row for the batch, decided from the names and keys taken (read
// first, or only when the inserts find one taken: writeBatch). Each item gets its
// own outcome, in the order given; a bad item fails only itself. Items
// are decided in order, as if created one after another: of two items
// with the same name or key, the first is created and the second is
// answered as a single create would be then (the same key and body: the
// first's schedule, not created). The active_schedules quota is counted
// once and admits items until it is full; the rest get the *QuotaError.
// The error is for the whole batch: a bad tenant, too many items, or the
// store failing (then nothing of the batch was written).
func (c *Control) CreateBatch(ctx context.Context, tenantID string, items []BatchItem) ([]BatchOutcome, error) {
	return c.createBatch(ctx, tenantID, items, false)
}

// CheckBatch answers as CreateBatch would, to the item, and writes
// nothing: a dry run. It runs CreateBatch's own transaction (its reads,
// the store's unique names and keys, the quota) and rolls it back, so its
// answer is the one a create at that moment would have had. Created then
// means "would be created"; the ids it names are not kept.
func (c *Control) CheckBatch(ctx context.Context, tenantID string, items []BatchItem) ([]BatchOutcome, error) {
	return c.createBatch(ctx, tenantID, items, true)
}

// createBatch is CreateBatch, or CheckBatch when dry.
func (c *Control) createBatch(ctx context.Context, tenantID string, items []BatchItem, dry bool) ([]BatchOutcome, error) {
	if err := schedule.CheckTenantRef(tenantID); err != nil {
		return nil, err
	}
	if len(items) > MaxBatch {
		return nil, schedule.Invalid("items", "%d items are more than the %d one batch may hold", len(items), MaxBatch)
	}
	// The first firings are computed and written under one tz database:
	// a reload waits for them, and they for it (tzreload.go).
	c.planner.rules.RLock()
	defer c.planner.rules.RUnlock()
	now := c.now().Truncate(time.Millisecond)
	// One id per item, consecutive: the schedules the batch creates hold
	// one range of ids, which its audit entry names (batchAudit).
	ids, err := record.NewScheduleIDs(now, c.rand, len(items))
	if err != nil {
		return nil, fmt.Errorf("create schedules: %w", err)
	}
	out := make([]BatchOutcome, len(items))
	var pending []newSchedule // the items that passed validation, in order
	anyActive := false
	targets := map[string]error{} // a target's queue: whether the tenant has it
	for i := range items {
		ns, err := c.build(tenantID, &items[i], ids[i], now)
		if err == nil {
			q := ns.sc.Queue
			terr, seen := targets[q]
			if !seen {
				terr = checkTarget(ctx, c.store, tenantID, q)
				targets[q] = terr
			}
			err = terr
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		ns.index = i
		pending = append(pending, ns)
		anyActive = anyActive || ns.sc.State == record.ScheduleActive
	}
	if len(pending) == 0 {
		return out, nil
	}
	var limit int64 // the tenant's active_schedules quota; 0: none
	if anyActive {
		_, q, err := c.tenants.Limits(ctx, tenantID)
		if err != nil {
			return nil, fmt.Errorf("create schedules: %w", err)
		}
		limit = q.ActiveSchedules
	}
	var created int
	blind := true // the first try skips the read (writeBatch)
	for try := 1; ; {
		created, err = c.writeBatch(ctx, tenantID, pending, limit, blind, try > 1, dry, now, out)
		switch {
		case blind && errors.Is(err, store.ErrConflict):
			// A stored schedule holds a live name or a key of the batch
			// (or a concurrent create took one): nothing was written;
			// decide from the read, as a first try.
			blind = false
			continue
		case (errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrBusy)) && try < batchConflictTries:
			// A concurrent create won a name or key (or, on PostgreSQL,
			// two batches of the same names waited on each other's
			// inserts until one was aborted as a deadlock or timed out):
			// nothing of this try was written; read again and decide.
			blind = false
			try++
			continue
		}
		break
	}
	if err != nil {
		return nil, fmt.Errorf("create schedules: %w", err)
	}
	if created > 0 && !dry {
		for _, o := range out {
			if o.Created && o.Schedule != nil {
				c.planner.noteZone(o.Schedule.Kind, o.Schedule.TimeZone)
			}
		}
		c.planner.wake()
	}
	return out, nil
}

// newSchedule is a validated item of a batch: the record it would be
// stored as, and the lower bound of its first version.
type newSchedule struct {
	index int // in the batch
	sc    *record.Schedule
	after time.Time
}

// build validates an item and makes the record it would be stored as,
// under id: its first firing (or COMPLETED when it has none), version 1.
func (c *Control) build(tenantID string, it *BatchItem, id string, now time.Time) (newSchedule, error) {
	if err := schedule.CheckIdempotencyKey(it.IdempotencyKey); err != nil {
		return newSchedule{}, err
	}
	req := it.Settings // Normalize writes the defaults into it
	sp, err := req.Normalize()
	if err != nil {
		return newSchedule{}, err
	}
	first, after, ok, err := firstFiring(sp, req, now)
	if err != nil {
		return newSchedule{}, err
	}
	sc := &record.Schedule{
		TenantID: tenantID, ScheduleID: id, Shard: record.ShardOf(id, c.shards),
		Version: 1, State: record.ScheduleActive, NextRunAt: first,
		IdempotencyKey: it.IdempotencyKey, CreatedAt: now, UpdatedAt: now,
	}
	setSettings(sc, &req)
	if !ok {
		sc.State, sc.NextRunAt, after = record.ScheduleCompleted, time.Time{}, time.Time{}
	}
	return newSchedule{sc: sc, after: after}, nil
}

// writeBatch is one try of a batch's transaction (retry: a read-based
// try after the first): it decides every pending item into out (see
// decideCreate) from one read of the names and keys taken, and inserts
// the admitted ones. It returns how many it created; on an error nothing
// was written and out is to be decided again.
//
// A blind try skips the read, which was a fifth of a bulk create's store
// work (an index lookup per name and per key, nearly always finding
// nothing): it decides the items against each other alone and inserts
// them, and the unique indexes refuse the insert (ErrConflict) when a
// stored schedule holds one of their live names or keys. When the insert
// goes through, no stored schedule held any, so the read would have found
// nothing and every answer is the one it would have given. When the items
// alone refuse one of them (a name or key repeated in the batch, the
// quota full), the read could change that answer (a stored key answers
// exists before a quota or a name is looked at), so it is made then, in
// the same transaction, and the batch decided again from it.
//
// A dry try (CheckBatch) does all of that and rolls it back.
func (c *Control) writeBatch(ctx context.Context, tenantID string, pending []newSchedule, limit int64, blind, retry, dry bool, now time.Time, out []BatchOutcome) (int, error) {
	var admitted []*record.Schedule
	err := store.InTx(ctx, c.store, func(tx store.Tx) error {
		room0 := int64(-1) // -1: no quota
		switch {
		case limit > 0:
			r, err := activeRoom(ctx, tx, tenantID, limit)
			if err != nil {
				return err
			}
			room0 = r
		case retry:
			// A batch that lost a race takes the tenant's quota lock, so
			// that batches retrying together take turns instead of
			// racing again.
			if err := tx.LockTenantQuota(ctx, tenantID); err != nil {
				return err
			}
		}
		// decide answers every item from what stored holds; it reports
		// whether every item was created.
		decide := func(stored []record.Schedule) bool {
			taken, room, all := newTaken(stored), room0, true
			admitted = admitted[:0]
			for _, p := range pending {
				o := decideCreate(taken, p.sc, &room, limit)
				out[p.index] = o
				if o.Created {
					admitted = append(admitted, p.sc)
				}
				all = all && o.Created
			}
			return all
		}
		if !blind || !decide(nil) {
			stored, err := readTaken(ctx, tx, tenantID, pending)
			if err != nil {
				return err
			}
			decide(stored)
		}
		if len(admitted) == 0 {
			return nil
		}
		// Each with its first version row, in shard order: each insert
		// counts the schedule in its tenant's row of that shard (the live
		// count the quota reads), and two batches taking those rows' locks
		// in one order cannot deadlock.
		// (The items are sorted by reference: a row is a few hundred bytes.)
		order := make([]*newSchedule, 0, len(admitted))
		for i := range pending {
			if out[pending[i].index].Created {
				order = append(order, &pending[i])
			}
		}
		slices.SortFunc(order, func(a, b *newSchedule) int {
			return cmp.Or(cmp.Compare(a.sc.Shard, b.sc.Shard), cmp.Compare(a.sc.ScheduleID, b.sc.ScheduleID))
		})
		rows := make([]store.NewSchedule, len(order))
		for i, p := range order {
			rows[i] = store.NewSchedule{Schedule: p.sc, First: store.NewScheduleVersion(p.sc, now, p.after)}
		}
		if err := tx.InsertSchedules(ctx, rows); err != nil {
			return err
		}
		audit := createAudit(admitted[0])
		if len(admitted) > 1 {
			audit = batchAudit(admitted)
		}
		if err := appendAudit(ctx, tx, now, audit); err != nil {
			return err
		}
		return dryRunEnd(dry)
	})
	if err := dryRunErr(err); err != nil {
		return 0, err
	}
	return len(admitted), nil
}

// readTaken reads, in tx, the tenant's stored schedules that the pending
// items may collide with: the live ones under their names, and those
// created with their keys.
func readTaken(ctx context.Context, tx store.Tx, tenantID string, pending []newSchedule) ([]record.Schedule, error) {
	names := make([]string, 0, len(pending))
	keys := make([]string, 0, len(pending))
	for _, p := range pending {
		names = append(names, p.sc.Name)
		if p.sc.IdempotencyKey != "" {
			keys = append(keys, p.sc.IdempotencyKey)
		}
	}
	return tx.SchedulesByNamesOrKeys(ctx, tenantID, names, keys)
}

// taken is what a create must not collide with: the tenant's live names
// and its idempotency keys, with the schedule holding each key.
type taken struct {
	names map[string]bool
	keys  map[string]*record.Schedule
}

func newTaken(stored []record.Schedule) *taken {
	t := &taken{names: make(map[string]bool, len(stored)), keys: make(map[string]*record.Schedule, len(stored))}
	for i := range stored {
		t.add(&stored[i])
	}
	return t
}

// add records sc as stored (or about to be).
func (t *taken) add(sc *record.Schedule) {
	if sc.State != record.ScheduleCanceled {
		t.names[sc.Name] = true
	}
	if sc.IdempotencyKey != "" {
		t.keys[sc.IdempotencyKey] = sc
	}
}

// decideCreate is the one rule of what a create of sc leads to, given
// what is taken: an idempotency key used before answers with that
// schedule when the body is the same (not created) and is a conflict
// otherwise; a live name already used is a conflict; an ACTIVE schedule
// needs room under the active_schedules quota (*room < 0: none; it is
// counted down, and limit names the quota in the error). A schedule
// admitted is added to taken, so that a later item of the same batch
// sees it.
func decideCreate(t *taken, sc *record.Schedule, room *int64, limit int64) BatchOutcome {
	if key := sc.IdempotencyKey; key != "" {
		if prev := t.keys[key]; prev != nil {
			if sameBody(prev, sc) {
				return BatchOutcome{Schedule: prev}
			}
			return BatchOutcome{Err: fmt.Errorf("idempotency key %q was used for schedule %s with another body: %w", key, prev.ScheduleID, ErrConflict)}
		}
	}
	if t.names[sc.Name] {
		return BatchOutcome{Err: fmt.Errorf("create schedule: name %q is already used by a live schedule: %w", sc.Name, ErrConflict)}
	}
	if sc.State == record.ScheduleActive && *room >= 0 {
		if *room == 0 {
			return BatchOutcome{Err: activeQuotaError(sc.TenantID, limit)}
		}
		*room--
	}
	t.add(sc)
	return BatchOutcome{Schedule: sc, Created: true}
}

// createAudit is the audit entry of a schedule's creation, when it is
// the only one its batch (or a single create) made.
func createAudit(sc *record.Schedule) auditEntry {
	return auditEntry{tenantID: sc.TenantID, action: AuditScheduleCreate, target: sc.ScheduleID,
		newVer: sc.Version, detail: fmt.Sprintf("name %q, queue %q, %s %s, %s", sc.Name, sc.Queue, sc.Kind, sc.Expr, sc.State)}
}

// batchAudit is the one audit entry of a batch that created several
// schedules (created, in id order): one row
// for the batch where a row per schedule was most of what a bulk create
// wrote besides the schedules themselves. Its target is the range of
// their ids, first..last (record.ScheduleIDRange): a batch's ids are
// consecutive (record.NewScheduleIDs), so the tenant's schedules in that
// range are exactly the ones it created (an item refused or answered from
// its key left its id unused), and a schedule's own audit finds this
// entry by its id (Audit.List). The detail counts them and names the
// first and the last.
func batchAudit(created []*record.Schedule) auditEntry {
	first, last := created[0], created[len(created)-1]
	return auditEntry{tenantID: first.TenantID, action: AuditScheduleCreateBatch,
		target: record.ScheduleIDRange(first.ScheduleID, last.ScheduleID), newVer: 1,
		detail: fmt.Sprintf("%d schedules created; first %q, last %q", len(created), first.Name, last.Name)}
}
