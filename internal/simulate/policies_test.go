package simulate

import (
	"testing"

	"github.com/sched-dev/sched/api"
)

// TestMisfirePolicies: a minutely schedule under each misfire policy
// through a ten-minute outage from 09:55 to 10:05.
func TestMisfirePolicies(t *testing.T) {
	for _, policy := range []string{"skip", "fire_once", "catch_up:3"} {
		t.Run(policy, func(t *testing.T) {
			b := simulate(t, &api.SimulateRequest{
				Schedules: []api.ScheduleRequest{{Name: "minutely", Queue: "q", Cron: "* * * * *", TimeZone: "UTC", MisfirePolicy: policy}},
				From:      "2027-03-15T09:50:00Z", To: "2027-03-15T10:10:00Z",
				Outages: []api.SimWindow{{Start: "2027-03-15T09:55:00Z", End: "2027-03-15T10:05:00Z"}},
			})
			golden(t, "misfire-"+policy+".json", b)
		})
	}
}
