package schedule_test

import (
	"testing"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// The settings' policy types mirror the store's (package schedule may not
// import the store; see its doc): the same spellings, the same payload
// limit, and a RetryPolicy that converts field for field.
var _ = store.RetryPolicy(schedule.RetryPolicy{})

func TestPoliciesMatchTheStore(t *testing.T) {
	t.Parallel()
	for _, p := range []struct{ got, want string }{
		{string(schedule.MisfireSkip), string(store.MisfireSkip)},
		{string(schedule.MisfireFireOnce), string(store.MisfireFireOnce)},
		{string(schedule.MisfireCatchUp), string(store.MisfireCatchUp)},
		{string(schedule.OverlapAllow), string(store.OverlapAllow)},
		{string(schedule.OverlapSkipIfRunning), string(store.OverlapSkipIfRunning)},
		{string(schedule.OverlapQueueOne), string(store.OverlapQueueOne)},
	} {
		if p.got != p.want {
			t.Errorf("schedule spells %q, the store %q", p.got, p.want)
		}
	}
	if schedule.MaxPayload != store.MaxPayload {
		t.Errorf("MaxPayload %d, the store's %d", schedule.MaxPayload, store.MaxPayload)
	}
}
