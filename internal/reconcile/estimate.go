package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// estimate bounds a reconcile's cost before anything is walked: it reads
// the version rows the audit will read and counts, from each active
// version's timetable, the firings it may produce in the range (from the
// version's start, or the range's, to the last firing it kept or planned,
// or the range's end), stopping once the total passes opt.MaxFirings. An
// every or an at counts in constant time; a cron expression walks at most
// the bound's firings (timetable.CountFirings). Past the bound the
// reconcile is refused, naming from: a shorter range, one tenant or one
// schedule is cheaper.
func (r *run) estimate(ctx context.Context) error {
	left := r.opt.MaxFirings
	p := store.ListScheduleVersionsParams{TenantID: r.opt.TenantID, ScheduleID: r.opt.ScheduleID, Limit: r.opt.PageSize}
	for {
		page, err := r.st.ListScheduleVersions(ctx, p)
		if err != nil {
			return fmt.Errorf("reconcile: estimate: %w", err)
		}
		for _, v := range page {
			n, err := r.versionFirings(v, left+1)
			if err != nil {
				return err
			}
			if left -= n; left < 0 {
				return inputErr("from", "the range from %s to %s holds more than %d expected firings, the bound (schedule %s alone: %s): audit a shorter range, one tenant or one schedule",
					fmtTime(r.opt.From), fmtTime(r.opt.To), r.opt.MaxFirings, v.ScheduleID, atLeast(n, r.opt.MaxFirings))
			}
		}
		if len(page) < p.Limit {
			return nil
		}
		last := page[len(page)-1]
		p.AfterScheduleID, p.AfterVersion = last.ScheduleID, last.Version
	}
}

// versionFirings counts, up to limit, the firings of version v the audit
// may walk: those after its start, in the range (from its tenant's start),
// and, for a superseded version, up to the later of its last kept firing
// and how far it had been planned.
func (r *run) versionFirings(v store.ScheduleVersion, limit int) (int, error) {
	if v.State != record.ScheduleActive || v.StartsAfter.IsZero() {
		return 0, nil // it fires nothing
	}
	from, to := r.startOf(v.TenantID), r.opt.To
	if after := v.StartsAfter.Add(time.Nanosecond); after.After(from) {
		from = after
	}
	if v.Superseded() {
		end := v.EndsAt
		if v.PlannedUntil.After(end) {
			end = v.PlannedUntil
		}
		if end.Before(to) {
			to = end
		}
	}
	if to.Before(from) {
		return 0, nil
	}
	sp, err := r.parse(v.Definition)
	if err != nil {
		return 0, fmt.Errorf("reconcile schedule %s version %d: %w", v.ScheduleID, v.Version, err)
	}
	return sp.CountFirings(from, to, limit), nil
}

// atLeast words a count that stopped at its limit.
func atLeast(n, bound int) string {
	if n > bound {
		return fmt.Sprintf("more than %d", bound)
	}
	return fmt.Sprintf("%d", n)
}
