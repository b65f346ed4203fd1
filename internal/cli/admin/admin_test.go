package admin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// TestReloadTZCommand drives schedctl admin reload-tz through schedctl's
// root against a real daemon whose tz database changed under it: the
// summary and table on a terminal, the rows without, JSON, and what moved
// in the store.
func TestReloadTZCommand(t *testing.T) {
	tztest.Use(t, "2026a")
	start := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC)
	d := clidaemon.New(t, clidaemon.Config{Start: start, Horizon: 72 * time.Hour})
	ctx := t.Context()
	shift, _, err := d.Engine.Control.Create(ctx, "default", "", schedule.Settings{Name: "shift", Queue: "q",
		Kind: timetable.KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Engine.Control.Create(ctx, "default", "", schedule.Settings{Name: "steady", Queue: "q",
		Kind: timetable.KindCron, Expr: "0 9 * * *", TimeZone: "Test/Steady"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Engine.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}

	tztest.Install(t, "2026b")
	code, out, errOut := d.Run(t, true, "admin", "reload-tz")
	want := "tz database 2026b (was 2026a): 1 zone(s) changed; 4 shard(s) rezoned, 0 pending, 0 fenced.\n" +
		"ZONE        SCHEDULES  MOVED  CANCELED  KEPT  REPLANNED\n" +
		"Test/Shift  1          1      2         1     3\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("admin reload-tz = %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	sc, err := d.Engine.Control.Get(ctx, "default", shift.ScheduleID)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.NextRunAt.Equal(time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("Test/Shift cursor after reload-tz: %s, want 2027-02-02T13:00:00Z (09:00 at UTC-4)", sc.NextRunAt)
	}

	// Again, not on a terminal: nothing changed, so the summary line
	// alone says so; with --no-headers there is no row to print.
	code, out, _ = d.Run(t, false, "admin", "reload-tz")
	if code != 0 || !strings.HasSuffix(out, "no zone of an active cron schedule changed its rules.\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("admin reload-tz again, not a tty = %d %q; want the summary line alone", code, out)
	}
	code, out, _ = d.Run(t, false, "--no-headers", "admin", "reload-tz")
	if code != 0 || out != "" {
		t.Errorf("admin reload-tz again, --no-headers = %d %q; want no rows", code, out)
	}
	code, out, _ = d.Run(t, false, "admin", "reload-tz", "-o", "json")
	var res api.TZReload
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil || code != 0 {
		t.Fatalf("admin reload-tz -o json = %d %q: %v", code, out, err)
	}
	if want := (api.TZReload{PreviousTZVersion: "2026b", TZVersion: "2026b", PreviousTZLabel: "2026b", TZLabel: "2026b",
		Zones: []api.TZZoneMoves{}}); !reflect.DeepEqual(res, want) {
		t.Errorf("admin reload-tz -o json = %+v, want %+v", res, want)
	}

	code, _, errOut = d.Run(t, false, "admin", "reload-tz", "extra")
	if code != 2 || !strings.Contains(errOut, "extra") {
		t.Errorf("admin reload-tz extra = %d %q; want a usage error naming it", code, errOut)
	}
}

// TestReloadTZCommandLocalRebuild: on a tz database rebuilt with other
// rules under the same version line (2026a-local: 2026b's rules, version
// 2026a), the summary names the rules by their label, which tells the
// rebuild from the release.
func TestReloadTZCommandLocalRebuild(t *testing.T) {
	tztest.Use(t, "2026a")
	start := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC)
	d := clidaemon.New(t, clidaemon.Config{Start: start, Horizon: 72 * time.Hour})
	ctx := t.Context()
	if _, _, err := d.Engine.Control.Create(ctx, "default", "", schedule.Settings{Name: "shift", Queue: "q",
		Kind: timetable.KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Engine.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}

	tztest.Install(t, "2026a-local")
	code, out, errOut := d.Run(t, true, "admin", "reload-tz")
	// The label: the version, and the digest of the zone whose rules
	// differ from the ones recorded under it, as loaded now.
	fp, err := timetable.ZoneFingerprint("Test/Shift")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("Test/Shift=" + fp + "\n"))
	label := "2026a+local." + hex.EncodeToString(sum[:])[:8]
	want := "tz database " + label + " (was 2026a): 1 zone(s) changed; 4 shard(s) rezoned, 0 pending, 0 fenced.\n" +
		"ZONE        SCHEDULES  MOVED  CANCELED  KEPT  REPLANNED\n" +
		"Test/Shift  1          1      2         1     3\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("admin reload-tz = %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
}
