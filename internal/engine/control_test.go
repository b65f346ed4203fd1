package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
)

func TestCreateRejectsBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2097-03-01T00:00:00Z"), nil)
	ok := cronIn("ok", "0 9 * * *", "Europe/Berlin")
	tests := []struct {
		name  string
		mut   func(*schedule.Settings)
		field string
		msg   string // the message starts with it, when given
	}{
		{"never fires", func(s *schedule.Settings) { s.Expr = "0 0 31 2 *" }, "cron", ""},
		{"bad minute", func(s *schedule.Settings) { s.Expr = "61 * * * *" }, "cron", `minute field "61"`},
		{"long cron", func(s *schedule.Settings) { s.Expr = strings.Repeat("1,", 200) + "1 * * * *" }, "cron", ""},
		{"no zone", func(s *schedule.Settings) { s.TimeZone = "" }, "time_zone", ""},
		{"Local zone", func(s *schedule.Settings) { s.TimeZone = "Local" }, "time_zone", ""},
		{"path zone", func(s *schedule.Settings) { s.TimeZone = "../../etc/passwd" }, "time_zone", ""},
		{"empty name", func(s *schedule.Settings) { s.Name = "" }, "name", ""},
		{"control char in name", func(s *schedule.Settings) { s.Name = "a\x00b" }, "name", ""},
		{"long name", func(s *schedule.Settings) { s.Name = strings.Repeat("n", 4096) }, "name", ""},
		{"sql in queue", func(s *schedule.Settings) { s.Queue = "' OR 1=1 --" }, "queue", ""},
		{"payload too big", func(s *schedule.Settings) { s.Payload = make([]byte, record.MaxPayload+1) }, "payload", ""},
		{"catch_up K 1001", func(s *schedule.Settings) { s.MisfirePolicy, s.CatchUpK = record.MisfireCatchUp, 1001 }, "misfire_policy", ""},
		{"catch_up K 0", func(s *schedule.Settings) { s.MisfirePolicy = record.MisfireCatchUp }, "misfire_policy", ""},
		{"unknown misfire", func(s *schedule.Settings) { s.MisfirePolicy = "later" }, "misfire_policy", ""},
		{"negative lateness", func(s *schedule.Settings) { s.MaxLateness = -time.Second }, "max_lateness", ""},
		{"huge lateness", func(s *schedule.Settings) { s.MaxLateness = time.Duration(1 << 62) }, "max_lateness", ""},
		{"1ns lateness", func(s *schedule.Settings) { s.MaxLateness = 1 }, "max_lateness", ""},
		{"unknown overlap", func(s *schedule.Settings) { s.OverlapPolicy = "never" }, "overlap_policy", ""},
		{"flex window fraction", func(s *schedule.Settings) { s.FlexibleWindow = 1500 * time.Millisecond }, "flexible_window", ""},
		{"max attempts", func(s *schedule.Settings) { s.Retry.MaxAttempts = -1 }, "max_attempts", ""},
		{"cap below base", func(s *schedule.Settings) { s.Retry.BackoffBase, s.Retry.BackoffCap = time.Minute, time.Second }, "retry_cap", ""},
		{"dst on every", func(s *schedule.Settings) { s.Kind, s.Expr, s.DSTGap = timetable.KindEvery, "1h", timetable.GapShift }, "dst_gap", ""},
		{"every 0s", func(s *schedule.Settings) { s.Kind, s.Expr = timetable.KindEvery, "0s" }, "every", ""},
		{"at in the past", func(s *schedule.Settings) { s.Kind, s.Expr = timetable.KindAt, "2097-02-28T00:00:00Z" }, "at", ""},
		{"at year 10000", func(s *schedule.Settings) { s.Kind, s.Expr = timetable.KindAt, "10000-01-01T00:00:00Z" }, "at", ""},
		{"bad kind", func(s *schedule.Settings) { s.Kind = "sometimes" }, "kind", ""},
		{"name shaped like an id", func(s *schedule.Settings) { s.Name = "sch_01jabcdefghijklmnopqrstuv" }, "name", `name: "sch_01jabcdefghijklmnopqrstuv" starts with "sch_"`},
		{"name ..", func(s *schedule.Settings) { s.Name = ".." }, "name", `name: "..": a name must not be only dots`},
		{"name with a bidi override", func(s *schedule.Settings) { s.Name = "evil\u202egnp.exe" }, "name", `name: "evil\u202egnp.exe" contains an invisible`},
		{"every anchored past the last firing", func(s *schedule.Settings) {
			s.Kind, s.Expr, s.TimeZone, s.Anchor = timetable.KindEvery, "87600h", "UTC", utc("9999-12-31T23:59:59Z")
		}, "anchor", "anchor 9999-12-31T23:59:59Z: after 9999-12-31T09:59:59Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ok
			tt.mut(&req)
			_, _, err := h.e.Control.Create(h.ctx, tenant, "", req)
			var ve *schedule.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			if ve.Field != tt.field {
				t.Errorf("field %q (%v), want %q", ve.Field, err, tt.field)
			}
			if !strings.HasPrefix(ve.Message, tt.msg) {
				t.Errorf("message %q, want it to start with %q", ve.Message, tt.msg)
			}
		})
	}
	if n, _ := h.e.Control.List(h.ctx, store.ListSchedulesParams{TenantID: tenant}); len(n) != 0 {
		t.Errorf("bad input stored %d schedules", len(n))
	}
	// A rare expression is still valid: it fires on leap days only.
	leap := cronIn("leap", "0 0 29 2 *", "UTC")
	sc, _, err := h.e.Control.Create(h.ctx, tenant, "", leap)
	if err != nil || !sc.NextRunAt.Equal(utc("2104-02-29T00:00:00Z")) {
		t.Fatalf("0 0 29 2 * from 2097-03-01: %v next %v, want 2104-02-29", err, sc)
	}
}

func TestCreateIdempotent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	req := cronIn("report", "0 9 * * *", "Europe/Berlin")
	a, created, err := h.e.Control.Create(h.ctx, tenant, "key-1", req)
	if err != nil || !created {
		t.Fatalf("first create: %v created=%v", err, created)
	}
	b, created, err := h.e.Control.Create(h.ctx, tenant, "key-1", req)
	if err != nil || created || b.ScheduleID != a.ScheduleID {
		t.Fatalf("same key, same body: %v created=%v id %s vs %s", err, created, b.ScheduleID, a.ScheduleID)
	}
	other := req
	other.Expr = "0 10 * * *"
	if _, _, err := h.e.Control.Create(h.ctx, tenant, "key-1", other); !errors.Is(err, ErrConflict) {
		t.Fatalf("same key, another body: %v, want ErrConflict", err)
	}
	// The same key is another tenant's own.
	if _, created, err := h.e.Control.Create(h.ctx, "tenant-b", "key-1", req); err != nil || !created {
		t.Fatalf("another tenant's key: %v", err)
	}
	// A live name is unique per tenant.
	if _, _, err := h.e.Control.Create(h.ctx, tenant, "", req); !errors.Is(err, ErrConflict) {
		t.Fatalf("a second schedule named %q: %v, want ErrConflict", req.Name, err)
	}
	if got, err := h.e.Control.Get(h.ctx, tenant, "report"); err != nil || got.ScheduleID != a.ScheduleID {
		t.Fatalf("get by name: %v", err)
	}
	if _, err := h.e.Control.Get(h.ctx, "tenant-b", a.ScheduleID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another tenant's id: %v, want ErrNotFound", err)
	}
}

// Pause cancels unclaimed occurrences and reports the claimed ones as in
// flight; resume starts from the first firing after the resume time.
func TestPauseResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), func(c *Config) { c.Horizon = 5 * time.Minute })
	sc := h.create(every("tick", "1m"))
	h.advance(time.Minute) // 10:01 due; 10:02..10:06 ahead
	inFlight := h.claim("q", 1)
	if len(inFlight) != 1 {
		t.Fatalf("claimed %d", len(inFlight))
	}
	res, err := h.e.Control.Pause(h.ctx, tenant, sc.ScheduleID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Canceled != 5 || res.InFlight != 1 || res.Schedule.State != record.SchedulePaused || res.Schedule.Version != 2 {
		t.Fatalf("pause: canceled %d in flight %d state %s version %d; want 5, 1, PAUSED, 2",
			res.Canceled, res.InFlight, res.Schedule.State, res.Schedule.Version)
	}
	// The claimed one cannot be recalled: its worker finishes it.
	if _, err := h.e.Queue.Ack(h.ctx, tenant, inFlight[0].Occurrence.OccurrenceID, 1); err != nil {
		t.Fatal(err)
	}
	h.advance(10 * time.Minute)
	if n := len(h.claim("q", 10)); n != 0 {
		t.Fatalf("a paused schedule delivered %d", n)
	}
	h.clk.Set(utc("2027-01-04T10:20:30Z"))
	res, err = h.e.Control.Resume(h.ctx, tenant, sc.ScheduleID)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Schedule.NextRunAt.Equal(utc("2027-01-04T10:21:00Z")) || res.Schedule.Version != 3 {
		t.Fatalf("resume: next %s version %d, want 10:21 and 3", res.Schedule.NextRunAt, res.Schedule.Version)
	}
	h.plan()
	var versions []int64
	for _, o := range h.occurrences(sc.ScheduleID) {
		if o.State == record.OccurrenceEnqueued {
			versions = append(versions, o.ScheduleVersion)
		}
	}
	if len(versions) == 0 || versions[0] != 3 {
		t.Fatalf("after resume: enqueued versions %v", versions)
	}
}

// After an update, the new version starts strictly after the last firing
// kept, so no firing time is under two versions.
func TestUpdateStartsAfterLastKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), func(c *Config) { c.Horizon = 5 * time.Minute })
	req := every("tick", "1m")
	sc := h.create(req)
	h.advance(3 * time.Minute)
	// 10:01, 10:02, 10:03 are due: claim all three; 10:04..10:08 wait.
	if got := h.claim("q", 3); len(got) != 3 {
		t.Fatalf("claimed %d", len(got))
	}
	req.Expr = "30s"
	res, err := h.e.Control.Update(h.ctx, tenant, sc.ScheduleID, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Canceled != 5 || res.InFlight != 3 {
		t.Fatalf("update: canceled %d in flight %d, want 5 and 3", res.Canceled, res.InFlight)
	}
	if !res.Schedule.NextRunAt.Equal(utc("2027-01-04T10:03:30Z")) {
		t.Fatalf("new version starts at %s, want 10:03:30 (after the last kept 10:03)", res.Schedule.NextRunAt)
	}
	h.plan()
	seen := map[time.Time]int64{}
	for _, o := range h.occurrences(sc.ScheduleID) {
		if o.State == record.OccurrenceCanceled {
			continue
		}
		if v, dup := seen[o.ScheduledFor]; dup {
			t.Errorf("%s under versions %d and %d", o.ScheduledFor, v, o.ScheduleVersion)
		}
		seen[o.ScheduledFor] = o.ScheduleVersion
	}
	// Canceled schedules cannot be updated, and keep their history.
	if _, err := h.e.Control.Cancel(h.ctx, tenant, sc.ScheduleID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Control.Update(h.ctx, tenant, sc.ScheduleID, req); !errors.Is(err, ErrConflict) {
		t.Fatalf("update of a canceled schedule: %v, want ErrConflict", err)
	}
	if n := len(h.occurrences(sc.ScheduleID)); n < 8 {
		t.Fatalf("history: %d occurrences kept", n)
	}
}

// An at schedule resumed after its instant has nothing left to fire: the
// resume completes it in the one version it writes, in one transaction.
func TestResumePastInstantCompletes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2027-01-04T10:00:00Z"), nil)
	sc := h.create(schedule.Settings{Name: "launch", Queue: "q", Kind: timetable.KindAt, Expr: "2027-01-04T11:00:00Z"})
	if _, err := h.e.Control.Pause(h.ctx, tenant, sc.ScheduleID); err != nil {
		t.Fatal(err)
	}
	h.clk.Set(utc("2027-01-04T12:00:00Z"))
	res, err := h.e.Control.Resume(h.ctx, tenant, sc.ScheduleID)
	if err != nil {
		t.Fatal(err)
	}
	got := h.schedule(sc.ScheduleID)
	if res.Schedule.State != record.ScheduleCompleted || res.Schedule.Version != 3 || !res.Schedule.NextRunAt.IsZero() ||
		got.State != record.ScheduleCompleted || got.Version != 3 {
		t.Fatalf("resume past the instant: %s version %d next %v (stored %s version %d); want COMPLETED at version 3, no cursor",
			res.Schedule.State, res.Schedule.Version, res.Schedule.NextRunAt, got.State, got.Version)
	}
}

// TestCreateEveryWithNoFiringLeft: an every schedule whose first firing
// after now would be past the last computable instant is refused, naming
// every, rather than stored already finished; one that still has a firing
// is taken.
func TestCreateEveryWithNoFiringLeft(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("9999-12-31T09:00:00Z"), nil)
	late := schedule.Settings{Name: "late", Queue: "q", Kind: timetable.KindEvery, Expr: "2h"}
	_, _, err := h.e.Control.Create(h.ctx, tenant, "", late)
	var ve *schedule.ValidationError
	if !errors.As(err, &ve) || ve.Field != "every" ||
		ve.Message != "every: 2h has no firing after 9999-12-31T09:00:00Z before 9999-12-31T09:59:59Z, the last instant an every schedule can fire at" {
		t.Fatalf("err = %v, want a ValidationError of every", err)
	}
	if n, _ := h.e.Control.List(h.ctx, store.ListSchedulesParams{TenantID: tenant}); len(n) != 0 {
		t.Fatalf("stored %d schedules", len(n))
	}
	ok := schedule.Settings{Name: "ok", Queue: "q", Kind: timetable.KindEvery, Expr: "30m"}
	sc, _, err := h.e.Control.Create(h.ctx, tenant, "", ok)
	if err != nil || sc.State != record.ScheduleActive || !sc.NextRunAt.Equal(utc("9999-12-31T09:30:00Z")) {
		t.Fatalf("every 30m: %v %+v, want active, next 09:30", err, sc)
	}
}
