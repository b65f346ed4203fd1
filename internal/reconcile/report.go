package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

// Report runs a reconcile and gathers its results as the API's report:
// what GET /v1/reconcile answers and `schedd reconcile -o json` prints.
// Unlike Run it holds every schedule's summary (one per schedule with
// something in the range) and every finding.
func Report(ctx context.Context, st store.Store, opt Options) (*api.ReconcileReport, error) {
	rep := &api.ReconcileReport{From: opt.From.UTC(), To: opt.To.UTC(),
		Schedules: []api.ReconcileSchedule{}, Absent: []api.ReconcileFinding{}, Unexpected: []api.ReconcileFinding{},
		Manual: []api.ReconcileFinding{}, Unverifiable: []api.ReconcileFinding{}, TZWarnings: []api.ReconcileTZWarning{},
		TZVersion: timetable.TZVersion()}
	if opt.Horizons == nil {
		hs, err := st.HistoryHorizons(ctx)
		if err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		opt.Horizons = hs
	}
	if from := CompleteFrom(opt); from.After(opt.From) {
		from = from.UTC()
		rep.CompleteFrom = &from
	}
	total, err := Run(ctx, st, opt, (*reportSink)(rep))
	if err != nil {
		return nil, err
	}
	rep.Totals = APICounts(total)
	rep.Problem = total.Problem()
	return rep, nil
}

// reportSink gathers a reconcile into a report.
type reportSink api.ReconcileReport

func (s *reportSink) Schedule(sum Summary) error {
	s.Schedules = append(s.Schedules, api.ReconcileSchedule{TenantID: sum.TenantID, ScheduleID: sum.ScheduleID,
		Name: sum.Name, Versions: sum.Versions, ReconcileCounts: APICounts(sum.Counts)})
	return nil
}

func (s *reportSink) Finding(f Finding) error {
	w := api.ReconcileFinding{TenantID: f.TenantID, ScheduleID: f.ScheduleID, Name: f.Name, Version: f.Version,
		ScheduledFor: f.ScheduledFor.UTC().Truncate(time.Second), OccurrenceID: f.OccurrenceID, State: string(f.State), Reason: f.Reason}
	switch f.Class {
	case Absent:
		s.Absent = append(s.Absent, w)
	case Manual:
		s.Manual = append(s.Manual, w)
	case Unverifiable:
		s.Unverifiable = append(s.Unverifiable, w)
	default:
		s.Unexpected = append(s.Unexpected, w)
	}
	return nil
}

func (s *reportSink) TZWarning(w TZWarning) error {
	s.TZWarnings = append(s.TZWarnings, api.ReconcileTZWarning{Zone: w.Zone, StoreTZVersion: w.StoreVersion, TZVersion: w.Version,
		Shards: w.Shards, Schedules: w.Schedules, Unverifiable: w.Unverifiable, Message: w.Message()})
	return nil
}

// APICounts is c as the wire type.
func APICounts(c Counts) api.ReconcileCounts {
	return api.ReconcileCounts{Succeeded: c[Succeeded], Dead: c[Dead], Canceled: c[Canceled], Missed: c[Missed],
		MissedCounted: c[MissedCounted], SkippedOverlap: c[SkippedOverlap], Pending: c[Pending], Absent: c[Absent],
		CanceledByChange: c[CanceledByChange], Manual: c[Manual], Unexpected: c[Unexpected], Unverifiable: c[Unverifiable]}
}
