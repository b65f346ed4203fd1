package rowcodec

import (
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// ScanExpiredAttempt reads one row of a driver's expired-attempts query:
// occurrence id, tenant, attempt, attempt floor, retry start (ms),
// occurrence version, schedule version, schedule state, max attempts,
// backoff base, backoff cap and retry deadline (ms).
func ScanExpiredAttempt(row Scanner) (*store.ExpiredAttempt, error) {
	var (
		x                     store.ExpiredAttempt
		state                 string
		from, base, capMS, dl int64
	)
	if err := row.Scan(&x.OccurrenceID, &x.TenantID, &x.Attempt, &x.AttemptFloor, &from, &x.OccurrenceVersion,
		&x.ScheduleVersion, &state, &x.Retry.MaxAttempts, &base, &capMS, &dl); err != nil {
		return nil, err
	}
	x.RetryFrom, x.ScheduleState = FromMS(from), record.ScheduleState(state)
	x.Retry.BackoffBase, x.Retry.BackoffCap, x.Retry.Deadline = FromDurMS(base), FromDurMS(capMS), FromDurMS(dl)
	return &x, nil
}
