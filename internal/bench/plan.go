package bench

import (
	"fmt"
	"time"
	_ "time/tzdata" // the zones below, on a system without a zoneinfo database

	"github.com/sched-dev/sched/api"
)

// zones are the time zones burst and scale write their cron expressions
// in: whole-hour offsets on both sides of UTC with and without daylight
// saving, and the half-hour, quarter-hour and 12:45 ones.
var zones = []string{
	"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu",
	"Australia/Adelaide", "Pacific/Chatham", "America/St_Johns", "Asia/Tokyo", "America/Los_Angeles",
}

// queue is the queue every bench schedule fires on.
const queue = "bench"

// base is what every bench schedule shares: it fires on the bench queue
// and a late firing is still delivered (an hour's lateness), so that a
// slow run shows as lag, never as firings dropped by the misfire policy.
func base(name, key string) api.ScheduleRequest {
	return api.ScheduleRequest{Name: name, Queue: queue, MisfirePolicy: "fire_once", MaxLateness: "1h", IdempotencyKey: key}
}

// dailyAt is n schedules, each a daily cron in one of the zones at the
// local wall time that is the instant at there, so all of them fire at
// the same UTC instant. at must be a whole minute.
func dailyAt(prefix string, n int, at time.Time, flex time.Duration) ([]api.ScheduleRequest, error) {
	return dailyAtFrom(prefix, 0, n, at, flex)
}

// dailyAtFrom is dailyAt's schedules first to first+n-1, so that a large
// load can be made and sent a part at a time.
func dailyAtFrom(prefix string, first, n int, at time.Time, flex time.Duration) ([]api.ScheduleRequest, error) {
	crons := make([]api.ScheduleRequest, 0, len(zones))
	for _, z := range zones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			return nil, fmt.Errorf("zone %s: %w", z, err)
		}
		lt := at.In(loc)
		r := api.ScheduleRequest{Cron: fmt.Sprintf("%d %d * * *", lt.Minute(), lt.Hour()), TimeZone: z}
		crons = append(crons, r)
	}
	out := make([]api.ScheduleRequest, n)
	for i := range out {
		name := fmt.Sprintf("%s-%06d", prefix, first+i)
		r := base(name, name)
		r.Cron, r.TimeZone = crons[(first+i)%len(crons)].Cron, crons[(first+i)%len(crons)].TimeZone
		if flex > 0 {
			r.FlexibleWindow = flex.String()
		}
		out[i] = r
	}
	return out, nil
}

// everyMinute is rate schedules per second of span (at most a minute),
// each "every 1m" anchored at a whole second of [start, start+span), so
// that rate firings fall due in each second from start on: the steady
// shape of a large population of recurring schedules.
func everyMinute(rate int, start time.Time, span time.Duration) []api.ScheduleRequest {
	secs := int(min(span, time.Minute) / time.Second)
	out := make([]api.ScheduleRequest, 0, rate*secs)
	for s := range secs {
		anchor := start.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339)
		for k := range rate {
			name := fmt.Sprintf("s-%02d-%06d", s, k)
			r := base(name, name)
			r.Every, r.Anchor = "1m", anchor
			out = append(out, r)
		}
	}
	return out
}

// expectedIn counts a created schedule's firings in [from, to]: from its
// preview for a cron (the bench's are daily, so the preview reaches past
// any run), by arithmetic from its anchor and its first firing not yet
// passed at creation for an every.
func expectedIn(req api.ScheduleRequest, sc *api.Schedule, from, to time.Time) int {
	if req.Every != "" {
		if sc.NextFireAt == nil {
			return 0
		}
		every, err := time.ParseDuration(req.Every)
		if err != nil || every <= 0 {
			return 0
		}
		n := 0
		for t := *sc.NextFireAt; !t.After(to); t = t.Add(every) {
			if !t.Before(from) {
				n++
			}
		}
		return n
	}
	if len(sc.Preview) == 0 {
		// A batch create answers without a preview. The bench's crons
		// fire once a day and a measured window is shorter than a day:
		// the next firing is the only one that can fall in it.
		if sc.NextFireAt == nil || sc.NextFireAt.Before(from) || sc.NextFireAt.After(to) {
			return 0
		}
		return 1
	}
	n := 0
	for _, f := range sc.Preview {
		if !f.ScheduledFor.Before(from) && !f.ScheduledFor.After(to) {
			n++
		}
	}
	return n
}
