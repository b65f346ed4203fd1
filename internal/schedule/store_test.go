package schedule_test

import (
	"testing"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/schedule"
)

// The settings' policy types mirror the store's (package schedule may not
// import the store; see its doc): the same spellings, the same payload
// limit, and a RetryPolicy that converts field for field.
var _ = record.RetryPolicy(schedule.RetryPolicy{})

func TestPoliciesMatchTheStore(t *testing.T) {
	t.Parallel()
	for _, p := range []struct{ got, want string }{
		{string(schedule.MisfireSkip), string(record.MisfireSkip)},
		{string(schedule.MisfireFireOnce), string(record.MisfireFireOnce)},
		{string(schedule.MisfireCatchUp), string(record.MisfireCatchUp)},
		{string(schedule.OverlapAllow), string(record.OverlapAllow)},
		{string(schedule.OverlapSkipIfRunning), string(record.OverlapSkipIfRunning)},
		{string(schedule.OverlapQueueOne), string(record.OverlapQueueOne)},
	} {
		if p.got != p.want {
			t.Errorf("schedule spells %q, the store %q", p.got, p.want)
		}
	}
	if schedule.MaxPayload != record.MaxPayload {
		t.Errorf("MaxPayload %d, the store's %d", schedule.MaxPayload, record.MaxPayload)
	}
}
