// Package reconcile audits a store: for every schedule, what its
// timetables promised over a range of time, version by version, against
// the occurrences the store records. Each expected firing gets a class
// (succeeded, dead, canceled, missed, counted as missed, skipped for
// overlap, pending, or absent), and every occurrence no version explains
// is unexpected.
//
// It reads the version history (store.HistoryStore), the schedules and
// their occurrences, and asks the time engine for the firings; it does not
// import the engine. A reconcile that reused the planner's code would
// share its mistakes: here the expected firings come from the timetable
// alone, bounded by what the history says each version covered, and the
// planner's state enters only as how far planning has got (the schedule's
// cursor).
//
// It streams: schedules are read a page at a time, and one schedule's
// occurrences are walked beside its expected firings in time order, so
// memory does not grow with the number of schedules nor with the
// occurrences of one.
package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// Class is what became of one expected firing, or what explains one
// occurrence.
type Class string

// Classes. The first eight classify the firings the timetables promised;
// the last three the occurrences that are not one of those.
const (
	Succeeded      Class = "succeeded"       // its occurrence SUCCEEDED
	Dead           Class = "dead"            // its occurrence is DEAD
	Canceled       Class = "canceled"        // its occurrence was CANCELED
	Missed         Class = "missed"          // a MISSED row
	MissedCounted  Class = "missed_counted"  // no row: the misfire rule counted it
	SkippedOverlap Class = "skipped_overlap" // SKIPPED_OVERLAP by the overlap rule
	Pending        Class = "pending"         // not finished, or not yet planned
	Absent         Class = "absent"          // planned, yet no row and not counted

	CanceledByChange Class = "canceled_by_change" // a row a change canceled: of the schedule (an older version's) or of its zone's rules (a tz database update)
	Manual           Class = "manual"             // a trigger outside the timetable
	Unexpected       Class = "unexpected"         // no version explains it

	// Unverifiable is what would have been absent or unexpected, of a
	// cron schedule whose zone's rules differ between the tz database its
	// shard was planned under and the reconciler's (tzcheck.go).
	Unverifiable Class = "unverifiable"
)

// Counts counts by class.
type Counts map[Class]int

// Problem reports whether anything was absent or unexpected.
func (c Counts) Problem() bool { return c[Absent] > 0 || c[Unexpected] > 0 }

// add adds o to c.
func (c Counts) add(o Counts) {
	for k, v := range o {
		c[k] += v
	}
}

// Options select what to reconcile.
type Options struct {
	// From and To bound the firings and occurrences looked at, both
	// inclusive, by scheduled time. From must be before To.
	From, To time.Time
	// Now, when set, is the present by the clock of the daemon that owns
	// the store: To may be at most MaxAhead after it. schedd reconcile
	// leaves it unset, since its wall clock need not be the store's (a
	// copy audited elsewhere); there MaxFirings alone bounds the part of
	// the range past now.
	Now time.Time
	// TenantID, when set, limits the audit to one tenant.
	TenantID string
	// ScheduleID, when set, limits it to one schedule. Schedule may name
	// it instead, by id or by name; a name is looked up in TenantID, or
	// in NameTenant when no tenant is set.
	ScheduleID string
	Schedule   string
	NameTenant string
	// PageSize is the rows read per query; 0 means store.MaxListLimit.
	PageSize int
	// MaxFirings bounds the firings the audit expects in the range,
	// estimated before it walks any (estimate.go), and, apart, those it
	// walks past the range's end to settle late runs; 0 means
	// DefaultMaxFirings. A reconcile beyond it is refused (*InputError).
	MaxFirings int
	// Horizons are the tenants' history horizons (store.RetentionStore):
	// a tenant's audit starts at its horizon when that is after From,
	// since retention may have removed the finished occurrences before
	// it. Nil: Run reads them from the store.
	Horizons map[string]time.Time
}

// Check reports a bad range.
func (o Options) Check() error {
	if o.From.IsZero() || o.To.IsZero() {
		return inputErr("from", "the range needs both ends")
	}
	if !o.From.Before(o.To) {
		return inputErr("from", "the range's start %s is not before its end %s",
			o.From.UTC().Format(time.RFC3339), o.To.UTC().Format(time.RFC3339))
	}
	if o.To.Sub(o.From) > MaxSpan {
		return inputErr("from", "the range from %s to %s is longer than %d days, the bound: audit it a part at a time",
			o.From.UTC().Format(time.RFC3339), o.To.UTC().Format(time.RFC3339), MaxSpan/(24*time.Hour))
	}
	if limit := o.Now.Add(MaxAhead); !o.Now.IsZero() && o.To.After(limit) {
		return inputErr("to", "%s is more than %s after now (%s), the bound: a reconcile audits what should already have happened, and past now there is nothing to check but pending firings",
			o.To.UTC().Format(time.RFC3339), fmtHours(MaxAhead), o.Now.UTC().Format(time.RFC3339))
	}
	if o.MaxFirings < 0 {
		return inputErr("max-firings", "%d: must be 0 (the default, %d) or more", o.MaxFirings, DefaultMaxFirings)
	}
	return nil
}

// Summary is one schedule's counts.
type Summary struct {
	TenantID   string
	ScheduleID string
	Name       string
	Versions   int
	Counts     Counts
}

// Finding names one firing or occurrence: absent, unexpected or manual.
type Finding struct {
	Class        Class
	TenantID     string
	ScheduleID   string
	Name         string
	Version      int64
	ScheduledFor time.Time
	OccurrenceID string                 // the row's, or the id an absent firing's row would have had
	State        record.OccurrenceState // the row's; empty without one
	Reason       string
}

// Sink receives a reconcile's results as they are found: a schedule's
// findings, then its summary. A schedule with nothing in the range sends
// nothing. Once every schedule is done, the zones whose rules the audit
// could not check firings against (tzcheck.go) come last, by zone. An
// error stops the reconcile.
type Sink interface {
	Finding(Finding) error
	Schedule(Summary) error
	TZWarning(TZWarning) error
}

// Run reconciles the schedules opt selects, sending what it finds to sink,
// and returns the totals.
func Run(ctx context.Context, st store.Store, opt Options, sink Sink) (Counts, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if err := resolve(ctx, st, &opt); err != nil {
		return nil, err
	}
	if opt.PageSize <= 0 {
		opt.PageSize = store.MaxListLimit
	}
	if opt.MaxFirings == 0 {
		opt.MaxFirings = DefaultMaxFirings
	}
	if opt.Horizons == nil {
		hs, err := st.HistoryHorizons(ctx)
		if err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		opt.Horizons = hs
	}
	rules, err := st.ZoneRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	tz, err := newTZCheck(ctx, st, rules)
	if err != nil {
		return nil, err
	}
	r := &run{st: st, opt: opt, sink: sink, total: Counts{}, specs: map[timetable.Definition]*timetable.Timetable{},
		rulesChanged: rulesChanged(rules), tz: tz, lookahead: opt.MaxFirings}
	if err := r.estimate(ctx); err != nil {
		return nil, err
	}
	p := store.ListScheduleVersionsParams{TenantID: opt.TenantID, ScheduleID: opt.ScheduleID, Limit: opt.PageSize}
	var group []store.ScheduleVersion // one schedule's rows, which may span pages
	for {
		page, err := st.ListScheduleVersions(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		for _, v := range page {
			r.seen = true
			if len(group) > 0 && group[0].ScheduleID != v.ScheduleID {
				if err := r.schedule(ctx, group); err != nil {
					return nil, err
				}
				group = group[:0]
			}
			group = append(group, v)
		}
		if len(page) < p.Limit {
			break
		}
		last := page[len(page)-1]
		p.AfterScheduleID, p.AfterVersion = last.ScheduleID, last.Version
	}
	if len(group) > 0 {
		if err := r.schedule(ctx, group); err != nil {
			return nil, err
		}
	}
	if opt.ScheduleID != "" && !r.seen {
		return nil, &InputError{Field: "schedule", Err: fmt.Errorf("no schedule %s (in tenant %q): %w", opt.ScheduleID, opt.TenantID, store.ErrNotFound)}
	}
	for _, w := range r.tz.list() {
		if err := sink.TZWarning(w); err != nil {
			return nil, err
		}
	}
	return r.total, nil
}

// run is one reconcile.
type run struct {
	st    store.Store
	opt   Options
	sink  Sink
	total Counts
	seen  bool // a version row was read
	// specs keeps parsed timetables: a fleet shares few definitions. At
	// most maxSpecs entries, so memory stays flat.
	specs map[timetable.Definition]*timetable.Timetable
	// rulesChanged holds the zones whose rules differ between two tz
	// database versions the store has recorded: a cron schedule there may
	// have had firings withdrawn (CANCELED) when its node loaded the new
	// rules, at instants today's rules no longer name.
	rulesChanged map[string]bool
	// tz compares the rules the shards were planned under with the
	// loaded ones (tzcheck.go).
	tz *tzCheck
	// lookahead is how many more firings past the range's end the walks
	// may take, all schedules together, to settle late runs.
	lookahead int
}

// rulesChanged returns the zones with more than one fingerprint among the
// recorded rules.
func rulesChanged(rules []store.ZoneRule) map[string]bool {
	first := map[string]string{}
	changed := map[string]bool{}
	for _, r := range rules {
		if fp, ok := first[r.Zone]; !ok {
			first[r.Zone] = r.Fingerprint
		} else if fp != r.Fingerprint {
			changed[r.Zone] = true
		}
	}
	return changed
}

const maxSpecs = 4096

func (r *run) parse(d timetable.Definition) (*timetable.Timetable, error) {
	if sp := r.specs[d]; sp != nil {
		return sp, nil
	}
	sp, err := timetable.Parse(d)
	if err != nil {
		return nil, err
	}
	if len(r.specs) >= maxSpecs {
		clear(r.specs)
	}
	r.specs[d] = sp
	return sp, nil
}

// schedule reconciles one schedule from its version rows.
func (r *run) schedule(ctx context.Context, versions []store.ScheduleVersion) error {
	first := versions[0]
	sc, err := r.st.GetSchedule(ctx, first.TenantID, first.ScheduleID)
	if err != nil {
		return fmt.Errorf("reconcile schedule %s: %w", first.ScheduleID, err)
	}
	if last := versions[len(versions)-1]; last.Version < sc.Version {
		// A change committed between the two reads: read its history
		// again, now that the schedule read is the newer one.
		if versions, err = r.history(ctx, sc); err != nil {
			return err
		}
	}
	from := r.startOf(sc.TenantID)
	if !from.Before(r.opt.To) {
		return nil
	}
	c, err := r.newChecker(sc, versions, from)
	if err != nil {
		return err
	}
	if err := c.walk(ctx); err != nil {
		return fmt.Errorf("reconcile schedule %s: %w", sc.ScheduleID, err)
	}
	if len(c.counts) == 0 {
		return nil
	}
	r.total.add(c.counts)
	return r.sink.Schedule(Summary{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Name: sc.Name,
		Versions: len(versions), Counts: c.counts})
}

// startOf is where the audit of a tenant's schedules starts: the range's
// start, or the tenant's history horizon plus HorizonSlack when that is
// later (retention may have removed what is before).
func (r *run) startOf(tenant string) time.Time {
	from := r.opt.From
	if h, ok := r.opt.Horizons[tenant]; ok && h.Add(HorizonSlack).After(from) {
		from = h.Add(HorizonSlack)
	}
	return from
}

// HorizonSlack is how far after a tenant's history horizon its audit
// starts: retention moves the horizon forward while an audit runs (a few
// minutes a pass) and deletes up to it, so an audit that began at the
// horizon it read would find the rows deleted since absent. An audit
// longer than this may still see a few.
const HorizonSlack = time.Hour

// CompleteFrom is when the history opt audits is complete from: the
// latest horizon of the tenants it audits (opt.TenantID's, or every
// tenant's) plus HorizonSlack when that is after opt.From, else opt.From. Before it,
// retention may have removed finished occurrences, and the audit does not
// look there.
func CompleteFrom(opt Options) time.Time {
	from := opt.From
	for tenant, h := range opt.Horizons {
		if (opt.TenantID == "" || tenant == opt.TenantID) && h.Add(HorizonSlack).After(from) {
			from = h.Add(HorizonSlack)
		}
	}
	return from
}

// history reads all of one schedule's version rows.
func (r *run) history(ctx context.Context, sc *record.Schedule) ([]store.ScheduleVersion, error) {
	var out []store.ScheduleVersion
	p := store.ListScheduleVersionsParams{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Limit: r.opt.PageSize}
	for {
		page, err := r.st.ListScheduleVersions(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("reconcile schedule %s: %w", sc.ScheduleID, err)
		}
		out = append(out, page...)
		if len(page) < p.Limit {
			return out, nil
		}
		last := page[len(page)-1]
		p.AfterScheduleID, p.AfterVersion = last.ScheduleID, last.Version
	}
}
