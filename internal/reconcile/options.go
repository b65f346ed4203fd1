package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// DefaultSpan is how far back a reconcile looks when no start is given.
const DefaultSpan = 24 * time.Hour

// MaxSpan bounds a reconcile's range: a little over a year. The audit
// walks every firing in the range, so a start mistyped by decades would
// keep it busy for hours over a schedule that fires every second.
const MaxSpan = 400 * 24 * time.Hour

// MaxAhead is how far past now a range may end (Options.Now). A reconcile checks what
// should already have happened: past now there is nothing to audit but
// pending firings, and the planner has made rows at most its horizon
// ahead (24 hours at most), so a range that ends later only walks
// firings that cannot be checked.
const MaxAhead = 24 * time.Hour

// DefaultMaxFirings bounds the firings one reconcile expects (the sum
// over its schedules' versions, estimated from their timetables before
// anything is walked), and the firings walked past the range's end to
// settle late runs: the API's bound, so that no request keeps a core for
// long whatever its range and schedules.
const DefaultMaxFirings = 1_000_000

// OfflineMaxFirings is schedd reconcile's default bound: an operator's
// audit, on a machine and at a time of the operator's choosing, may walk
// more; its --max-firings flag raises it further.
const OfflineMaxFirings = 20 * DefaultMaxFirings

// InputError is a bad part of a reconcile's request: Field names it
// (from, to, schedule).
type InputError struct {
	Field string
	Err   error
}

func (e *InputError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Err: fmt.Errorf(format, args...)}
}

// ParseRange reads a range given as RFC 3339 strings, either of them
// empty: the end defaults to now, the start to DefaultSpan before the
// end. The API and schedd reconcile both read their ranges with it.
func ParseRange(from, to string, now time.Time) (time.Time, time.Time, error) {
	end := now
	if to != "" {
		t, err := time.Parse(time.RFC3339, to)
		if err != nil {
			return time.Time{}, time.Time{}, inputErr("to", "%q is not an RFC 3339 time (2027-03-14T07:00:00Z)", to)
		}
		end = t
	}
	start := end.Add(-DefaultSpan)
	if from != "" {
		t, err := time.Parse(time.RFC3339, from)
		if err != nil {
			return time.Time{}, time.Time{}, inputErr("from", "%q is not an RFC 3339 time (2027-03-14T07:00:00Z)", from)
		}
		start = t
	}
	if !start.Before(end) {
		return time.Time{}, time.Time{}, inputErr("from", "the range's start %s is not before its end %s",
			start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))
	}
	return start.UTC(), end.UTC(), nil
}

// fmtHours words a bound of whole hours.
func fmtHours(d time.Duration) string { return fmt.Sprintf("%d hours", d/time.Hour) }

// resolve turns opt.Schedule (an id or a name) into opt.ScheduleID.
func resolve(ctx context.Context, st store.Store, opt *Options) error {
	ref := opt.Schedule
	if ref == "" || opt.ScheduleID != "" {
		return nil
	}
	if record.IsScheduleID(ref) {
		opt.ScheduleID = ref
		return nil
	}
	tenant := opt.TenantID
	if tenant == "" {
		tenant = opt.NameTenant
	}
	sc, err := st.GetScheduleByName(ctx, tenant, ref)
	if errors.Is(err, store.ErrNotFound) {
		return &InputError{Field: "schedule", Err: fmt.Errorf("no live schedule named %q in tenant %q: %w", ref, tenant, err)}
	}
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	opt.ScheduleID = sc.ScheduleID
	return nil
}
