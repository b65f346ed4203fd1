package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// VersionChange is one new version of a schedule: what an update, pause,
// resume or cancel writes.
type VersionChange struct {
	// Schedule holds every field of the new version. Its Version is
	// ignored: the new version is PrevVersion+1.
	Schedule *record.Schedule
	// PrevVersion is the version the change was made from. The change
	// applies only while it is still the stored one.
	PrevVersion int64
	// Now is when the change is made: older-version occurrences it
	// cancels finish then.
	Now time.Time
	// Next, when set and the new version is ACTIVE, computes the new
	// cursor from lastKept: the latest firing of the timetable already
	// materialized and not canceled by this change (zero when there is
	// none). The cursor is the first firing of the new version, strictly
	// after lastKept, so that no firing time runs under two versions. A
	// zero cursor means nothing is left to fire: the new version is
	// COMPLETED. Without Next, Schedule.NextRunAt is kept as given.
	Next func(lastKept time.Time) time.Time
	// StartsAfter, when set, is the bound Next searched from, given
	// lastKept: the version history records it as the new version's
	// lower bound. Without it the bound recorded is lastKept.
	StartsAfter func(lastKept time.Time) time.Time
	// Action is what the audit log records the change as (an Audit*
	// action); AuditScheduleUpdate when empty.
	Action string
	// DryRun does all of the above in the transaction and rolls it back:
	// the answer is the change's, and nothing of it is kept.
	DryRun bool
}

// WriteVersion writes a new version of a schedule in one transaction of
// st, under this rule:
//
//  1. the change applies only if the stored version is still
//     c.PrevVersion (ErrConflict otherwise, ErrNotFound when the tenant
//     has no such schedule), and nothing else writes the schedule until
//     it commits;
//  2. every occurrence of an older version that no worker holds is
//     canceled: SCHEDULED, ENQUEUED and RETRY_WAIT become CANCELED
//     (finished_at = c.Now). RUNNING ones cannot be recalled and are
//     counted as in flight; they are never retried (a retryable nack or a
//     lease expiry of one makes it CANCELED);
//  3. an ACTIVE new version with c.Next gets the cursor c.Next(lastKept),
//     where lastKept is computed after step 2, and becomes COMPLETED when
//     that is zero;
//  4. the new version is written, conditional on c.PrevVersion;
//  5. the version history follows: the previous version's row is closed
//     (superseded at c.Now, its firings ending at lastKept, the planner
//     having got to the cursor read in step 1 if the schedule was ACTIVE
//     then: the firings between lastKept and that cursor were planned,
//     and the change canceled them), and a row of
//     the new version is written, starting after the bound its cursor was
//     searched from (none when it fires nothing);
//  6. the audit log records the change (c.Action), by the actor of ctx,
//     from c.PrevVersion to the new version.
//
// All of it commits together or not at all, so an update that leaves a
// schedule nothing to fire completes it in the same version. It is the
// control plane's one write path; it is exported so that the store
// conformance suite (storetest) runs the rule on every store.
func WriteVersion(ctx context.Context, st store.Store, c VersionChange) (ChangeResult, error) {
	sc := c.Schedule
	if sc == nil {
		return ChangeResult{}, errors.New("write version: no schedule")
	}
	var res ChangeResult
	err := store.InTx(ctx, st, func(tx store.Tx) error {
		have, err := tx.LockScheduleVersion(ctx, sc.TenantID, sc.ScheduleID)
		if err != nil {
			return err
		}
		if have.Version != c.PrevVersion {
			return fmt.Errorf("%w: version %d was read, the stored version is %d", store.ErrConflict, c.PrevVersion, have.Version)
		}
		// Which occurrences the change cancels and how many are in
		// flight is decided on rows: the runs holding the schedule's
		// occurrences are folded first.
		if err := foldSchedule(ctx, tx, sc.TenantID, sc.ScheduleID, nil); err != nil {
			return fmt.Errorf("fold: %w", err)
		}
		var plannedUntil time.Time // how far the planner got under the version superseded
		if have.State == record.ScheduleActive {
			plannedUntil = have.NextRunAt
		}
		version := c.PrevVersion + 1
		res.Canceled, res.InFlight, err = tx.CancelOlderOccurrences(ctx, sc.ScheduleID, version, c.Now)
		if err != nil {
			return err
		}
		next := *sc
		next.Version = version
		last, err := tx.LastKeptFiring(ctx, sc.ScheduleID)
		if err != nil {
			return err
		}
		var after time.Time // the new version's lower bound; zero: it fires nothing
		if next.State == record.ScheduleActive {
			after = last
			if c.StartsAfter != nil {
				after = c.StartsAfter(last)
			}
			if c.Next != nil {
				next.NextRunAt = c.Next(last)
				if next.NextRunAt.IsZero() {
					next.State, after = record.ScheduleCompleted, time.Time{}
				}
			}
		}
		stored, err := tx.WriteScheduleVersion(ctx, &next, c.PrevVersion)
		if err != nil {
			return err
		}
		if err := tx.CloseScheduleVersion(ctx, sc.ScheduleID, c.PrevVersion, c.Now, last, plannedUntil); err != nil {
			return err
		}
		if err := tx.InsertScheduleVersion(ctx, store.NewScheduleVersion(stored, c.Now, after)); err != nil {
			return err
		}
		res.Schedule = *stored
		if err := appendAudit(ctx, tx, c.Now, auditEntry{tenantID: sc.TenantID, action: cmp.Or(c.Action, AuditScheduleUpdate),
			target: sc.ScheduleID, oldVer: c.PrevVersion, newVer: stored.Version,
			detail: fmt.Sprintf("%s; %d canceled, %d in flight", stored.State, res.Canceled, res.InFlight)}); err != nil {
			return err
		}
		return dryRunEnd(c.DryRun)
	})
	if err := dryRunErr(err); err != nil {
		return ChangeResult{}, fmt.Errorf("write version %d of schedule %s: %w", c.PrevVersion+1, sc.ScheduleID, err)
	}
	return res, nil
}

// errDryRun rolls back the transaction of a dry run (CheckBatch,
// CheckUpdate) once it has done everything the real write does: its
// answer is then exactly the real one, and nothing of it is kept.
var errDryRun = errors.New("dry run: rolled back")

// dryRunEnd ends a write transaction's function: nil to commit it, or
// errDryRun to roll it back when dry.
func dryRunEnd(dry bool) error {
	if dry {
		return errDryRun
	}
	return nil
}

// dryRunErr is a write transaction's error with a dry run's rollback
// taken as success.
func dryRunErr(err error) error {
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}
