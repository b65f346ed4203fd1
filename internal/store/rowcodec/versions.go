package rowcodec

import (
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// VersionArgs is the values of the schedule_versions table's columns for
// v, in the order both drivers name them (schedule_id, version, tenant_id,
// kind, expr, time_zone, anchor, dst_gap, dst_repeat, state,
// misfire_policy, max_lateness_ms, catch_up_k, overlap_policy,
// flexible_window_ms, written_at, starts_after, first_firing,
// superseded_at, ends_at, planned_until). nullMS binds an optional instant in the
// driver's type.
func VersionArgs[N any](v *store.ScheduleVersion, nullMS func(time.Time) N) []any {
	d := &v.Definition
	return []any{v.ScheduleID, v.Version, v.TenantID, string(d.Kind), d.Expr, d.TimeZone, nullMS(d.Anchor),
		string(d.DSTGap), string(d.DSTRepeat), string(v.State), string(v.MisfirePolicy), DurMS(v.MaxLateness),
		v.CatchUpK, string(v.OverlapPolicy), DurMS(v.FlexibleWindow), MS(v.WrittenAt), nullMS(v.StartsAfter),
		nullMS(v.FirstFiring), nullMS(v.SupersededAt), nullMS(v.EndsAt), nullMS(v.PlannedUntil)}
}

// ScanVersion reads a row of the schedule_versions columns, in the order
// of VersionArgs.
func ScanVersion(row Scanner) (*store.ScheduleVersion, error) {
	var (
		v                                               store.ScheduleVersion
		kind, gap, repeat, state, mis, over             string
		lateMS, flexMS, written                         int64
		anchor, starts, first, superseded, end, planned *int64
	)
	if err := row.Scan(&v.ScheduleID, &v.Version, &v.TenantID, &kind, &v.Definition.Expr, &v.Definition.TimeZone, &anchor,
		&gap, &repeat, &state, &mis, &lateMS, &v.CatchUpK, &over, &flexMS, &written, &starts, &first, &superseded, &end, &planned); err != nil {
		return nil, err
	}
	v.Definition.Kind, v.Definition.DSTGap, v.Definition.DSTRepeat = timetable.Kind(kind), timetable.GapPolicy(gap), timetable.RepeatPolicy(repeat)
	v.Definition.Anchor = fromNullable(anchor)
	v.State, v.MisfirePolicy, v.OverlapPolicy = record.ScheduleState(state), record.MisfirePolicy(mis), record.OverlapPolicy(over)
	v.MaxLateness, v.FlexibleWindow, v.WrittenAt = FromDurMS(lateMS), FromDurMS(flexMS), FromMS(written)
	v.StartsAfter, v.FirstFiring = fromNullable(starts), fromNullable(first)
	v.SupersededAt, v.EndsAt, v.PlannedUntil = fromNullable(superseded), fromNullable(end), fromNullable(planned)
	return &v, nil
}

// ListVersionsArgs is the values a driver's version listing binds: tenant
// (” for any), schedule (” for any), the keyset position (schedule id,
// version) and the page's limit.
func ListVersionsArgs(p store.ListScheduleVersionsParams) []any {
	return []any{p.TenantID, p.ScheduleID, p.AfterScheduleID, p.AfterVersion, store.ListLimit(p.Limit)}
}

// fromNullable reads an optional instant column scanned into a pointer.
func fromNullable(v *int64) time.Time {
	if v == nil {
		return time.Time{}
	}
	return FromMS(*v)
}
