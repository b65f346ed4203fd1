package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
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
	// Before, when set, is the schedule as it was read for the change:
	// the audit entry then says which settings changed, from what to
	// what (settingChanges).
	Before *record.Schedule
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
			detail: versionDetail(c.Before, stored, res)}); err != nil {
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

// versionDetail is a new version's audit detail: its state, what it
// canceled and left in flight, and, with before, the settings it changed.
func versionDetail(before, after *record.Schedule, res ChangeResult) string {
	d := fmt.Sprintf("%s; %d canceled, %d in flight", after.State, res.Canceled, res.InFlight)
	if before == nil {
		return d
	}
	if ch := settingChanges(before, after); len(ch) > 0 {
		d += "; changed " + strings.Join(ch, ", ")
	}
	return d
}

// settingChanges lists the settings that differ between two versions of
// a schedule as "field old -> new", in the API's names and spellings. The
// payload is named, never shown: it may hold what the audit log's readers
// must not see, and it may be large.
func settingChanges(a, b *record.Schedule) []string {
	var out []string
	add := func(field, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s -> %s", field, quoteSetting(x), quoteSetting(y)))
		}
	}
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	add("name", a.Name, b.Name)
	add("state", string(a.State), string(b.State))
	add("kind", string(a.Kind), string(b.Kind))
	add(string(b.Kind), a.Expr, b.Expr)
	add("time_zone", a.TimeZone, b.TimeZone)
	add("anchor", ts(a.Anchor), ts(b.Anchor))
	add("dst_gap", string(a.DSTGap), string(b.DSTGap))
	add("dst_repeat", string(a.DSTRepeat), string(b.DSTRepeat))
	add("queue", a.Queue, b.Queue)
	add("misfire_policy", schedule.FormatMisfire(a.MisfirePolicy, a.CatchUpK), schedule.FormatMisfire(b.MisfirePolicy, b.CatchUpK))
	add("max_lateness", a.MaxLateness.String(), b.MaxLateness.String())
	add("overlap_policy", string(a.OverlapPolicy), string(b.OverlapPolicy))
	add("flexible_window", a.FlexibleWindow.String(), b.FlexibleWindow.String())
	add("max_attempts", strconv.Itoa(a.Retry.MaxAttempts), strconv.Itoa(b.Retry.MaxAttempts))
	add("retry_base", a.Retry.BackoffBase.String(), b.Retry.BackoffBase.String())
	add("retry_cap", a.Retry.BackoffCap.String(), b.Retry.BackoffCap.String())
	add("retry_deadline", a.Retry.Deadline.String(), b.Retry.Deadline.String())
	if !bytes.Equal(a.Payload, b.Payload) {
		out = append(out, fmt.Sprintf("payload (%d bytes -> %d bytes)", len(a.Payload), len(b.Payload)))
	}
	return out
}

// quoteSetting shows a setting's value in an audit detail: quoted when it
// has a space or is empty, so that "0 2 * * *" reads as one value.
func quoteSetting(v string) string {
	if v == "" || strings.ContainsAny(v, " ,") {
		return strconv.Quote(v)
	}
	return v
}
