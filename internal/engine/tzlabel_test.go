package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// localLabelOf is the tz label the documented rule gives a database of
// version whose zones' fingerprints differ from the recorded ones as in
// lines ("zone=fingerprint", sorted).
func localLabelOf(version string, lines ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n") + "\n"))
	return version + "+local." + hex.EncodeToString(sum[:])[:8]
}

// loadedLabelOf is localLabelOf for zones whose loaded rules differ.
func loadedLabelOf(t *testing.T, version string, zones ...string) string {
	t.Helper()
	var lines []string
	for _, zone := range zones {
		lines = append(lines, zone+"="+mustFingerprint(t, zone))
	}
	return localLabelOf(version, lines...)
}

func mustFingerprint(t *testing.T, zone string) string {
	t.Helper()
	fp, err := timetable.ZoneFingerprint(zone)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// recordedRule returns the fingerprint the store records for zone under
// label, failing the test when there is none.
func recordedRule(t *testing.T, h *harness, zone, label string) string {
	t.Helper()
	rules, err := h.st.ZoneRules(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp, ok := store.IndexZoneRules(rules).Fingerprint(zone, label)
	if !ok {
		t.Fatalf("no rules of %s recorded under %s: %+v", zone, label, rules)
	}
	return fp
}

// TestTZLabel: the label names the rules loaded: the version when every
// zone recorded under it agrees, else the version and a digest of the
// zones that differ (zones that agree, and other versions' rows, do not
// enter it, so nodes patched alike share it); a label the store records
// with other rules for a zone takes that zone into its digest.
func TestTZLabel(t *testing.T) {
	const v = "2026a"
	local := localLabelOf(v, "A=a1")
	for _, tc := range []struct {
		name   string
		stored []store.ZoneRule
		loaded map[string]string
		want   string
	}{
		{"nothing recorded", nil, map[string]string{"A": "a1"}, v},
		{"recorded rules agree",
			[]store.ZoneRule{{Zone: "A", TZVersion: v, Fingerprint: "a1"}, {Zone: "B", TZVersion: v, Fingerprint: "b"}},
			map[string]string{"A": "a1", "B": "b"}, v},
		{"other versions' rules do not count",
			[]store.ZoneRule{{Zone: "A", TZVersion: "2026b", Fingerprint: "a9"}},
			map[string]string{"A": "a1"}, v},
		{"a zone differs",
			[]store.ZoneRule{{Zone: "A", TZVersion: v, Fingerprint: "a0"}},
			map[string]string{"A": "a1"}, local},
		{"zones that agree leave the label as it is",
			[]store.ZoneRule{{Zone: "A", TZVersion: v, Fingerprint: "a0"}, {Zone: "B", TZVersion: v, Fingerprint: "b"}},
			map[string]string{"A": "a1", "B": "b"}, local},
		{"two zones differ",
			[]store.ZoneRule{{Zone: "B", TZVersion: v, Fingerprint: "b0"}, {Zone: "A", TZVersion: v, Fingerprint: "a0"}},
			map[string]string{"A": "a1", "B": "b1"}, localLabelOf(v, "A=a1", "B=b1")},
		{"the label recorded with the same rules",
			[]store.ZoneRule{{Zone: "A", TZVersion: v, Fingerprint: "a0"}, {Zone: "C", TZVersion: local, Fingerprint: "c"}},
			map[string]string{"A": "a1", "C": "c"}, local},
		{"the label recorded with other rules",
			[]store.ZoneRule{{Zone: "A", TZVersion: v, Fingerprint: "a0"}, {Zone: "C", TZVersion: local, Fingerprint: "c0"}},
			map[string]string{"A": "a1", "C": "c1"}, localLabelOf(v, "A=a1", "C=c1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tzLabel(v, store.IndexZoneRules(tc.stored), func(zone string) string { return tc.loaded[zone] })
			if got != tc.want {
				t.Errorf("tzLabel = %q, want %q", got, tc.want)
			}
			if labelVersion(got) != v {
				t.Errorf("labelVersion(%q) = %q, want %q", got, labelVersion(got), v)
			}
		})
	}
}

// TestTZLocalRebuildReload: an operator patches Test/Shift with zic, as
// 2026b changes it, under the version line 2026a, and reloads. The node
// tells the rebuild from the release: the firings move exactly as for
// 2026b, the result and the shards name the local label, and the official
// rules recorded under 2026a stay. Installing the release again brings
// the firings back. On every store.
func TestTZLocalRebuildReload(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		official := mustFingerprint(t, "Test/Shift")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour })
		f := newTZFixture(t, h)

		tztest.Install(t, "2026a-local")
		res, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		label := loadedLabelOf(t, "2026a", "Test/Shift")
		want := TZReloadResult{PreviousVersion: "2026a", Version: "2026a", PreviousLabel: "2026a", Label: label, Shards: 4,
			Changed: []TZZoneMoves{{Zone: "Test/Shift", Schedules: 1, Moved: 1, Canceled: 2, Kept: 1, Replanned: 3}}}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("reload on the rebuilt database:\n got %+v\nwant %+v", res, want)
		}
		if st := h.plan(); st.Enqueued != 2 {
			t.Errorf("pass after the reload enqueued %d, want the 2 moved firings", st.Enqueued)
		}
		f.checkUnder(t, h, label)
		if got := recordedRule(t, h, "Test/Shift", "2026a"); got != official {
			t.Errorf("rules of Test/Shift recorded under 2026a: %s, want the release's %s", got, official)
		}
		if got := recordedRule(t, h, "Test/Steady", "2026a"); got != mustFingerprint(t, "Test/Steady") {
			t.Errorf("rules of Test/Steady recorded under 2026a: %s, want %s (the same in the rebuild)", got, mustFingerprint(t, "Test/Steady"))
		}
		// The metric names the tz database's version; the audit, the
		// rules' labels.
		var info dto.Metric
		if err := h.e.TZ.planner.obs.metrics.TZ.Info.WithLabelValues("2026a").Write(&info); err != nil || info.GetGauge().GetValue() != 1 {
			t.Errorf("sched_tz_database_info{version=\"2026a\"} = %v (%v), want 1", info.GetGauge().GetValue(), err)
		}
		rows, err := h.st.ListAudit(h.ctx, store.ListAuditParams{TenantID: tenant, Target: f.shift.ScheduleID})
		if err != nil {
			t.Fatal(err)
		}
		wantDetail := "tz 2026a -> " + label + " (Test/Shift): 2 occurrence(s) canceled, cursor 2027-02-04T14:00:00Z -> 2027-02-02T13:00:00Z"
		var details []string
		for _, r := range rows {
			if r.Action == AuditScheduleRezone {
				details = append(details, r.Detail)
			}
		}
		if !reflect.DeepEqual(details, []string{wantDetail}) {
			t.Errorf("rezone audit rows: %q, want one: %s", details, wantDetail)
		}

		// The same database again: nothing to do.
		again, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if again.Label != label || again.PreviousLabel != label || len(again.Changed) != 0 || again.Shards != 0 || again.Pending != 0 {
			t.Errorf("second reload of the rebuilt database: %+v, want nothing changed", again)
		}

		// The release installed again: the firings come back.
		tztest.Install(t, "2026a")
		back, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatalf("reload of the release: %v", err)
		}
		wantBack := TZReloadResult{PreviousVersion: "2026a", Version: "2026a", PreviousLabel: label, Label: "2026a", Shards: 4,
			Changed: []TZZoneMoves{{Zone: "Test/Shift", Schedules: 1, Moved: 1, Canceled: 2, Kept: 1, Replanned: 2}}}
		if !reflect.DeepEqual(back, wantBack) {
			t.Errorf("reload of the release:\n got %+v\nwant %+v", back, wantBack)
		}
		h.plan()
		f.checkReverted(t, h)
		versions, err := h.st.ShardTZVersions(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for shard, v := range versions {
			if v != "2026a" {
				t.Errorf("shard %d recorded under %s after the release came back, want 2026a", shard, v)
			}
		}
	})
}

// TestTZLocalRebuildAtStart: a node started on the rebuilt database (a
// restart after the patch) rezones the shards recorded under the release
// at its first pass, and one started on the release again moves the
// firings back. On every store.
func TestTZLocalRebuildAtStart(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		official := mustFingerprint(t, "Test/Shift")
		mut := func(node string) func(*Config) {
			return func(c *Config) { c.Horizon = 72 * time.Hour; c.NodeID = node }
		}
		h := open(t, tzStart, mut("test-node"))
		f := newTZFixture(t, h)
		h.e.Stop() // hands its shards over

		tztest.UseAs(t, "2026a-local", "2026a")
		label := loadedLabelOf(t, "2026a", "Test/Shift")
		h2 := harnessOn(t, h.st, h.path, h.clk, mut("patched-node"))
		if st := h2.plan(); st.Enqueued != 2 {
			t.Errorf("first pass of the node started on the rebuilt database enqueued %d, want the 2 moved firings", st.Enqueued)
		}
		f.checkUnder(t, h2, label)
		if got := recordedRule(t, h2, "Test/Shift", "2026a"); got != official {
			t.Errorf("rules of Test/Shift recorded under 2026a: %s, want the release's %s", got, official)
		}

		h2.e.Stop()
		tztest.Use(t, "2026a")
		h3 := harnessOn(t, h.st, h.path, h.clk, mut("release-node"))
		h3.plan()
		f.checkReverted(t, h3)
		if n := rezoneAudits(t, h3, f.shift.ScheduleID); n != 2 {
			t.Errorf("%d schedule.rezone audit rows, want 2: to the rebuild and back", n)
		}
	})
}

// TestTZLabelTakenByOtherRules: another node, whose database was rebuilt
// with other rules of Test/Steady under the same version line, recorded
// them first (a row under 2026a this node's rules disagree with). When
// this node records the zone, at the pass after its first schedule there,
// it finds the row, takes another label, and its next pass rezones its
// shards to it: nothing moves (its firings were its own rules'), the
// shards name the new label, and the other node's row stays. On every
// store.
func TestTZLabelTakenByOtherRules(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		tztest.Use(t, "2026a")
		h := open(t, tzStart, func(c *Config) { c.Horizon = 72 * time.Hour })
		other := store.ZoneRule{Zone: "Test/Steady", TZVersion: "2026a", Fingerprint: "0123456789abcdef0123456789abcdef"}
		if err := h.st.SaveZoneRules(h.ctx, []store.ZoneRule{other}); err != nil {
			t.Fatal(err)
		}
		sc := h.create(schedule.Settings{Name: "steady", Queue: "q", Kind: timetable.KindCron, Expr: "0 15 * * *", TimeZone: "Test/Steady"})
		h.plan()
		before := h.occurrences(sc.ScheduleID)
		if len(before) == 0 {
			t.Fatal("nothing planned")
		}
		h.plan()

		label := loadedLabelOf(t, "2026a", "Test/Steady")
		versions, err := h.st.ShardTZVersions(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for shard, v := range versions {
			if v != label {
				t.Errorf("shard %d recorded under %s, want the new label %s", shard, v, label)
			}
		}
		if got := recordedRule(t, h, "Test/Steady", "2026a"); got != other.Fingerprint {
			t.Errorf("the other node's rules of Test/Steady: %s, want %s kept", got, other.Fingerprint)
		}
		if got, want := recordedRule(t, h, "Test/Steady", label), mustFingerprint(t, "Test/Steady"); got != want {
			t.Errorf("rules of Test/Steady under %s: %s, want this node's %s", label, got, want)
		}
		if got := h.occurrences(sc.ScheduleID); !sameOccurrences(got, before) ||
			len(firingTimes(got, record.OccurrenceCanceled)) != 0 {
			t.Errorf("occurrences after the relabel:\n got %+v\nwant %+v", got, before)
		}
		if n := rezoneAudits(t, h, sc.ScheduleID); n != 0 {
			t.Errorf("%d schedule.rezone audit rows, want none: nothing moved", n)
		}
		// A reload of the same database keeps the label.
		res, err := h.e.TZ.Reload(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Label != label || res.PreviousLabel != label || res.Shards != 0 || res.Pending != 0 {
			t.Errorf("reload: %+v, want label %s kept, nothing to do", res, label)
		}
	})
}
