package cmdutil

import (
	"context"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// API is what commands need of schedd: the methods of *client.Client.
// Commands take it through their options so tests can hand them a stub.
type API interface {
	Status(ctx context.Context) (*api.Status, error)
	Cluster(ctx context.Context) (*api.Cluster, error)
	CreateSchedule(ctx context.Context, req api.ScheduleRequest) (*api.CreateResult, error)
	CreateSchedules(ctx context.Context, items []api.BatchItem) (*api.BatchResult, error)
	CheckCreateSchedule(ctx context.Context, req api.ScheduleRequest) (*api.CreateResult, error)
	CheckCreateSchedules(ctx context.Context, items []api.BatchItem) (*api.BatchResult, error)
	CheckUpdateSchedule(ctx context.Context, ref string, req api.ScheduleRequest) (*api.ChangeResult, error)
	ListSchedules(ctx context.Context, o client.ListSchedulesOptions) (*api.ScheduleList, error)
	GetSchedule(ctx context.Context, ref string) (*api.Schedule, error)
	UpdateSchedule(ctx context.Context, ref string, req api.ScheduleRequest) (*api.ChangeResult, error)
	PauseSchedule(ctx context.Context, ref string) (*api.ChangeResult, error)
	ResumeSchedule(ctx context.Context, ref string) (*api.ChangeResult, error)
	CancelSchedule(ctx context.Context, ref string) (*api.ChangeResult, error)
	ListOccurrences(ctx context.Context, o client.ListOccurrencesOptions) (*api.OccurrenceList, error)
	ListAttempts(ctx context.Context, id string, o client.ListAttemptsOptions) (*api.AttemptList, error)
	Trigger(ctx context.Context, ref string, req api.TriggerRequest) (*api.TriggerResult, error)
	Claim(ctx context.Context, req api.ClaimRequest) (*api.ClaimResult, error)
	Heartbeat(ctx context.Context, id string, req api.HeartbeatRequest) (*api.HeartbeatResult, error)
	Ack(ctx context.Context, id string, req api.AckRequest) (*api.Occurrence, error)
	Nack(ctx context.Context, id string, req api.NackRequest) (*api.Occurrence, error)
	Replay(ctx context.Context, id string) (*api.Occurrence, error)
	ListDLQ(ctx context.Context, o client.ListDLQOptions) (*api.OccurrenceList, error)
	ReplayDLQ(ctx context.Context, f api.DLQFilter) (*api.DLQResult, error)
	PurgeDLQ(ctx context.Context, f api.DLQFilter) (*api.DLQResult, error)
}

var _ API = (*client.Client)(nil)
