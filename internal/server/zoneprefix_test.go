package server

import (
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// TestCreateWithZonePrefix: a cron expression written as Kubernetes and
// robfig/cron write it, "CRON_TZ=Asia/Tokyo 0 9 * * *", is accepted
// through the real API on a real store, stored without the prefix and with
// the zone set, and fires in that zone. A time_zone naming another zone
// and an unknown zone in the prefix are refused and change nothing.
func TestCreateWithZonePrefix(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.create(api.ScheduleRequest{Name: "tokyo", Queue: "q", Cron: "CRON_TZ=Asia/Tokyo 0 9 * * *"})
	if c.Expression != "0 9 * * *" || c.TimeZone != "Asia/Tokyo" || c.Kind != "cron" {
		t.Fatalf("created %s %q in %q; want cron %q in Asia/Tokyo", c.Kind, c.Expression, c.TimeZone, "0 9 * * *")
	}
	// start is 2027-01-04T10:00Z, 19:00 in Tokyo: the next 09:00 there is 00:00Z on the 5th.
	want := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	if c.NextRunAt == nil || !c.NextRunAt.Equal(want) {
		t.Fatalf("next_run_at %v, want %v", c.NextRunAt, want)
	}
	if len(c.Preview) == 0 || c.Preview[0].Local != "2027-01-05T09:00:00+09:00" {
		t.Fatalf("preview %+v", c.Preview)
	}
	var got api.Schedule
	h.ok(200, &got, "GET", "/v1/schedules/tokyo", nil)
	if got.Expression != "0 9 * * *" || got.TimeZone != "Asia/Tokyo" {
		t.Fatalf("stored %q in %q", got.Expression, got.TimeZone)
	}

	// The same zone in both places is fine; robfig's TZ= too.
	same := h.create(api.ScheduleRequest{Name: "berlin", Queue: "q", Cron: "TZ=Europe/Berlin 30 2 * * *", TimeZone: "Europe/Berlin"})
	if same.Expression != "30 2 * * *" || same.TimeZone != "Europe/Berlin" {
		t.Fatalf("created %q in %q", same.Expression, same.TimeZone)
	}

	before := h.snapshot()
	e := h.fails(400, api.CodeInvalidArgument, "cron", "POST", "/v1/schedules",
		api.ScheduleRequest{Name: "both", Queue: "q", Cron: "CRON_TZ=Asia/Tokyo 0 9 * * *", TimeZone: "Europe/Berlin"})
	if !strings.Contains(e.Message, `"Europe/Berlin"`) || !strings.Contains(e.Message, `"Asia/Tokyo"`) {
		t.Errorf("conflict message %q does not name both zones", e.Message)
	}
	e = h.fails(400, api.CodeInvalidTimeZone, "time_zone", "POST", "/v1/schedules",
		api.ScheduleRequest{Name: "mars", Queue: "q", Cron: "CRON_TZ=Mars/Olympus 0 9 * * *"})
	if e.Message != `cron expression's CRON_TZ= prefix: time zone "Mars/Olympus": unknown IANA zone` {
		t.Errorf("unknown zone message %q", e.Message)
	}
	// An update's prefix meets the stored zone: another zone is refused.
	h.fails(400, api.CodeInvalidArgument, "cron", "PUT", "/v1/schedules/berlin",
		api.ScheduleRequest{Name: "berlin", Queue: "q", Cron: "CRON_TZ=Asia/Tokyo 0 9 * * *", TimeZone: "Europe/Berlin"})
	if after := h.snapshot(); after != before {
		t.Errorf("refused requests changed the store:\nbefore %s\nafter  %s", before, after)
	}
}
