package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sched-dev/sched/internal/store"
)

// insertChunk is how many occurrences one INSERT writes at most. A whole
// planner batch (1,000 rows) is one statement; the bound keeps any one
// request to the server a few megabytes: no request may be unbounded in
// size, however large a batch grows.
const insertChunk = 5000

// occurrenceInserter writes occurrences within one transaction, one
// statement per chunk with one array per column (qInsertOccurrences), and
// counts the rows the unique keys let in.
type occurrenceInserter struct {
	ctx      context.Context
	tx       pgx.Tx
	cols     occurrenceArrays
	inserted int
}

// occurrenceArrays holds the pending rows column by column, in the order
// of occurrenceInsertColumns.
type occurrenceArrays struct {
	id, tenant, schedule               []string
	version, scheduledFor, availableAt []int64
	enqueuedAt                         []pgtype.Int8
	state, lane, queue                 []string
	attemptCount                       []int64
	firstClaimedAt, finishedAt         []pgtype.Int8
	overlap                            []string
	epoch, attemptFloor, retryFrom     []int64
	triggerKey, deadReason             []string
}

func newOccurrenceInserter(ctx context.Context, tx pgx.Tx) *occurrenceInserter {
	return &occurrenceInserter{ctx: ctx, tx: tx}
}

// add queues o, whose derived id is id, stamped with the shard epoch and
// enqueue time given. Zero RetryFrom is ScheduledFor and empty
// OverlapPolicy is allow.
func (in *occurrenceInserter) add(o *record.Occurrence, id string, epoch int64, enqueuedAt time.Time) error {
	retryFrom := o.RetryFrom
	if retryFrom.IsZero() {
		retryFrom = o.ScheduledFor
	}
	ovl := o.OverlapPolicy
	if ovl == "" {
		ovl = record.OverlapAllow
	}
	c := &in.cols
	c.id = append(c.id, id)
	c.tenant = append(c.tenant, o.TenantID)
	c.schedule = append(c.schedule, o.ScheduleID)
	c.version = append(c.version, o.ScheduleVersion)
	c.scheduledFor = append(c.scheduledFor, ms(o.ScheduledFor))
	c.availableAt = append(c.availableAt, ms(o.AvailableAt))
	c.enqueuedAt = append(c.enqueuedAt, nullMS(enqueuedAt))
	c.state = append(c.state, string(o.State))
	c.lane = append(c.lane, string(o.Lane))
	c.queue = append(c.queue, o.Queue)
	c.attemptCount = append(c.attemptCount, int64(o.AttemptCount))
	c.firstClaimedAt = append(c.firstClaimedAt, nullMS(o.FirstClaimedAt))
	c.finishedAt = append(c.finishedAt, nullMS(o.FinishedAt))
	c.overlap = append(c.overlap, string(ovl))
	c.epoch = append(c.epoch, epoch)
	c.attemptFloor = append(c.attemptFloor, int64(o.AttemptFloor))
	c.retryFrom = append(c.retryFrom, ms(retryFrom))
	c.triggerKey = append(c.triggerKey, o.TriggerKey)
	c.deadReason = append(c.deadReason, string(o.DeadReason))
	if len(c.id) >= insertChunk {
		return in.flush()
	}
	return nil
}

// flush writes the queued rows. When the unique keys turned some away, it
// checks that each one turned away is the same firing as the stored row
// (the common case: a duplicate; for a manual occurrence, the same
// schedule and trigger key, see qIDCollisions); a different firing under
// the same id is a hash collision, and fails loudly with
// store.ErrConflict, as the primary key's violation does in SQLite.
func (in *occurrenceInserter) flush() error {
	c := &in.cols
	n := len(c.id)
	if n == 0 {
		return nil
	}
	tag, err := in.tx.Exec(in.ctx, qInsertOccurrences,
		c.id, c.tenant, c.schedule, c.version, c.scheduledFor,
		c.availableAt, c.enqueuedAt, c.state, c.lane, c.queue, c.attemptCount, c.firstClaimedAt, c.finishedAt,
		c.overlap, c.epoch, c.attemptFloor, c.retryFrom, c.triggerKey, c.deadReason)
	if err != nil {
		return fmt.Errorf("insert occurrences %s...: %w", c.id[0], translate(err))
	}
	got := int(tag.RowsAffected())
	in.inserted += got
	if got < n {
		var id string
		err := in.tx.QueryRow(in.ctx, qIDCollisions, c.id, c.schedule, c.version, c.scheduledFor, c.triggerKey).Scan(&id)
		if err == nil {
			return fmt.Errorf("insert occurrence %s: %w: another occurrence is stored under its id", id, store.ErrConflict)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("insert occurrences: check duplicates: %w", translate(err))
		}
	}
	in.cols = occurrenceArrays{
		id: c.id[:0], tenant: c.tenant[:0], schedule: c.schedule[:0],
		version: c.version[:0], scheduledFor: c.scheduledFor[:0], availableAt: c.availableAt[:0],
		enqueuedAt: c.enqueuedAt[:0], state: c.state[:0], lane: c.lane[:0], queue: c.queue[:0],
		attemptCount: c.attemptCount[:0], firstClaimedAt: c.firstClaimedAt[:0], finishedAt: c.finishedAt[:0],
		overlap: c.overlap[:0], epoch: c.epoch[:0], attemptFloor: c.attemptFloor[:0], retryFrom: c.retryFrom[:0],
		triggerKey: c.triggerKey[:0], deadReason: c.deadReason[:0],
	}
	return nil
}
