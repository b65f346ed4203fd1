package tui

import (
	"context"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// Source is what the dashboard needs of schedd: a few read methods of
// *client.Client and Replay, the one action it offers. The dashboard reaches
// the daemon only through it, so tests can stand a fixed Source in for the
// daemon at the UI's edge.
type Source interface {
	Status(ctx context.Context) (*api.Status, error)
	ListSchedules(ctx context.Context, o client.ListSchedulesOptions) (*api.ScheduleList, error)
	GetSchedule(ctx context.Context, ref string) (*api.Schedule, error)
	ListOccurrences(ctx context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error)
	ListDLQ(ctx context.Context, o client.ListDLQOptions) (*api.OccurrenceList, error)
	Replay(ctx context.Context, id string) (*api.Occurrence, error)
}
