package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// installTZ copies one of the test tz releases (internal/timetable/
// testdata/tz: Test/Shift moves from UTC-5 to UTC-4 on 2027-02-02 in
// 2026b; Test/Steady never changes) into dir, over what is there: what a
// tz package update does to the host's zoneinfo directory.
func installTZ(t *testing.T, version, dir string) {
	t.Helper()
	src := filepath.Join("..", "timetable", "testdata", "tz", version)
	for _, name := range []string{"tzdata.zi", "Test/Shift", "Test/Steady"} {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The tz database changing under real schedd and schedctl processes:
// schedctl admin reload-tz moves the cursor of a cron schedule in the zone
// whose rules changed and counts it, a second reload finds nothing, and a
// restart on the old release again moves it back (the start compares with
// the rules the store recorded).
func TestReloadTZThroughTheBinaries(t *testing.T) {
	zi := filepath.Join(t.TempDir(), "zoneinfo")
	installTZ(t, "2026a", zi)
	t.Setenv("ZONEINFO", zi) // the children's tz database (hermeticEnv keeps it)
	d := startDaemon(t)

	var sc schedule
	d.ctlJSON(&sc, "create", "--name", "feb-2", "--queue", "q", "--cron", "0 9 2 2 *", "--tz", "Test/Shift")
	d.ctlJSON(nil, "create", "--name", "steady", "--queue", "q", "--cron", "0 9 2 2 *", "--tz", "Test/Steady")
	// 09:00 on Feb 2 at UTC-5 (2026a) is 14:00Z; at UTC-4 (2026b, from
	// 2027-02-02 on), 13:00Z.
	at := func(ref string) time.Time {
		t.Helper()
		sc := d.get(ref)
		if sc.NextRunAt == nil {
			t.Fatalf("%s has no next run", ref)
		}
		return sc.NextRunAt.UTC()
	}
	first := at("feb-2")
	if first.Month() != time.February || first.Day() != 2 || first.Hour() != 14 {
		t.Fatalf("feb-2 under 2026a: next run %s, want Feb 2 at 14:00Z", first)
	}
	steady := at("steady")

	installTZ(t, "2026b", zi)
	var res struct {
		Previous string `json:"previous_tz_version"`
		Version  string `json:"tz_version"`
		Zones    []struct {
			Zone                                        string
			Schedules, Moved, Canceled, Kept, Replanned int
		} `json:"zones"`
		Shards  int `json:"shards"`
		Pending int `json:"shards_pending"`
	}
	d.ctlJSON(&res, "admin", "reload-tz")
	if res.Previous != "2026a" || res.Version != "2026b" || len(res.Zones) != 1 || res.Zones[0].Zone != "Test/Shift" ||
		res.Zones[0].Schedules != 1 || res.Zones[0].Moved != 1 || res.Pending != 0 {
		t.Errorf("admin reload-tz -o json = %+v; want Test/Shift moved, from 2026a to 2026b", res)
	}
	if got, want := at("feb-2"), first.Add(-time.Hour); !got.Equal(want) {
		t.Errorf("feb-2 after reload-tz: next run %s, want %s (an hour earlier)", got, want)
	}
	if got := at("steady"); !got.Equal(steady) {
		t.Errorf("steady (unchanged zone) after reload-tz: next run %s, want %s", got, steady)
	}
	if r := d.ctlEnv(nil, "--addr", "unix:"+d.sock, "--no-headers", "admin", "reload-tz"); r.code != 0 || r.stdout != "" {
		t.Errorf("a second reload-tz, not on a terminal, --no-headers: %s; want exit 0 and no rows", r)
	}

	// Back to 2026a while schedd is down: its start finds the store's
	// rules (2026b) differ, and its first pass moves the firing back.
	if code, _ := d.proc.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("schedd after SIGTERM: exit %d", code)
	}
	installTZ(t, "2026a", zi)
	d.start()
	poll(t, "feb-2 back at 14:00Z after a start on 2026a", func() (bool, string) {
		got := at("feb-2")
		return got.Equal(first), "next run " + got.String()
	})
	if log := d.log.String(); !strings.Contains(log, `msg="tz rules changed: firings moved" zone=Test/Shift tz_version=2026a previous_tz_version=2026b`) {
		t.Errorf("the start on 2026a did not log the move:\n%s", log)
	}
}
