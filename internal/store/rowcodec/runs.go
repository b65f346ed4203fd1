package rowcodec

import (
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// RunRow is a row of the runs table as both drivers read it (their
// runColumns, in that order): Dest gives the scan targets, Run the run.
type RunRow struct {
	r                  store.Run
	lane               string
	claimedAt, expires int64
}

// Dest returns the scan targets of runColumns.
func (rr *RunRow) Dest() []any {
	r := &rr.r
	return []any{&r.ID, &r.TenantID, &r.Queue, &rr.lane, &r.First.AvailableAt, &r.First.Pos, &r.Last.AvailableAt,
		&r.Last.Pos, &r.N, &r.Acked, &r.WorkerID, &rr.claimedAt, &rr.expires}
}

// Run returns the run scanned.
func (rr *RunRow) Run() store.Run {
	r := rr.r
	r.Lane.Lane = record.Lane(rr.lane)
	r.First.Set, r.Last.Set = true, true
	r.ClaimedAt, r.LeaseExpiresAt = FromMS(rr.claimedAt), FromMS(rr.expires)
	return r
}
