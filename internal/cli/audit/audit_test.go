package audit_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/audit"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

const canary = "CANARY-cli-audit-77"

// newDaemon is a real daemon whose log holds, on the default tenant: the
// tenant's own creation and "nightly" created by token ci 48 hours before
// schedctl's clock, then paused by the admin token ops 12 hours before it;
// and on tenant acme, its creation over the Unix socket.
func newDaemon(t *testing.T) *clidaemon.Daemon {
	t.Helper()
	d := clidaemon.New(t, clidaemon.Config{Start: clitest.FixedNow.Add(-48 * time.Hour), Shards: 1,
		Rand: rand.NewChaCha8([32]byte{'a', 'u', 'd', 'i', 't'})})
	ci := engine.WithActor(t.Context(), engine.Actor{TenantID: "default", Token: "ci"})
	ops := engine.WithActor(t.Context(), engine.Actor{TenantID: "default", Token: "ops", Admin: true})
	if _, _, err := d.Engine.Control.Create(ci, "default", "", schedule.Settings{Name: "nightly", Queue: "q",
		Kind: timetable.KindCron, Expr: "0 3 * * *", TimeZone: "UTC", Payload: []byte(`{"k":"` + canary + `"}`)}); err != nil {
		t.Fatalf("create: %v", err)
	}
	d.Clock.Advance(36 * time.Hour)
	if _, err := d.Engine.Control.Pause(ops, "default", "nightly"); err != nil {
		t.Fatalf("pause: %v", err)
	}
	if _, _, err := d.Engine.Tenants.Create(t.Context(), "acme", engine.TenantPatch{}); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	return d
}

// entries runs schedctl audit -o json with args and decodes its entries,
// refusing any field the API does not declare.
func entries(t *testing.T, d *clidaemon.Daemon, args ...string) ([]api.AuditEntry, string) {
	t.Helper()
	code, out, errOut := d.Run(t, false, append([]string{"audit", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("audit %v: exit %d\n%s", args, code, errOut)
	}
	var es []api.AuditEntry
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&es); err != nil {
		t.Fatalf("audit %v: not a JSON array of entries: %v\n%s", args, err, out)
	}
	if strings.Contains(out, canary) {
		t.Errorf("audit %v shows a payload:\n%s", args, out)
	}
	return es, errOut
}

func actions(es []api.AuditEntry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Action+"@"+e.TenantID)
	}
	return strings.Join(s, " ")
}

func TestAuditFilters(t *testing.T) {
	d := newDaemon(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"own tenant", nil, "tenant.create@default schedule.create@default schedule.pause@default"},
		{"one schedule", []string{"--schedule", "nightly"}, "schedule.create@default schedule.pause@default"},
		{"since a duration ago", []string{"--since", "24h"}, "schedule.pause@default"},
		{"since days ago", []string{"--since", "3d"}, "tenant.create@default schedule.create@default schedule.pause@default"},
		{"since a time", []string{"--since", clitest.FixedNow.Add(-12 * time.Hour).Format(time.RFC3339)}, "schedule.pause@default"},
		{"another tenant", []string{"--tenant", "acme"}, "tenant.create@acme"},
		{"every tenant", []string{"--tenant", "*", "--since", "24h"}, "schedule.pause@default tenant.create@acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, _ := entries(t, d, tc.args...)
			if got := actions(es); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}

	es, _ := entries(t, d, "--schedule", "nightly")
	pause := es[1]
	if pause.Actor != (api.AuditActor{Tenant: "default", Token: "ops", Admin: true}) || pause.OldVersion != 1 || pause.NewVersion != 2 ||
		!pause.At.Equal(clitest.FixedNow.Add(-12*time.Hour)) || pause.Target != es[0].Target {
		t.Errorf("the pause: %+v; want ops's 1->2 of the schedule 12 hours ago", pause)
	}
}

func TestAuditPaging(t *testing.T) {
	d := newDaemon(t)
	first, footer := entries(t, d, "--limit", "1")
	if len(first) != 1 || !strings.Contains(footer, "--page ") {
		t.Fatalf("--limit 1: %d entries, footer %q; want one and the next page's token", len(first), footer)
	}
	token := strings.Fields(footer[strings.Index(footer, "--page ")+len("--page "):])[0]
	second, _ := entries(t, d, "--limit", "1", "--page", token)
	if len(second) != 1 || second[0].ID <= first[0].ID {
		t.Errorf("the page after %s: %+v; want the entry after %d", token, second, first[0].ID)
	}
	all, footer := entries(t, d, "--limit", "1", "--all")
	if len(all) != 3 || footer != "" {
		t.Errorf("--all: %d entries, footer %q; want 3 and none", len(all), footer)
	}
}

func TestAuditTable(t *testing.T) {
	d := newDaemon(t)
	code, out, errOut := d.Run(t, true, "audit")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	clitest.Golden(t, "audit-tty.golden", out)
	code, out, _ = d.Run(t, false, "audit", "--since", "24h")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.HasPrefix(out, "TIME\tACTOR\tACTION\t") ||
		!strings.Contains(out, "default/ops (admin)\tschedule.pause\t") || !strings.Contains(out, "\t1->2\t") {
		t.Errorf("plain table: exit %d\n%s; want the header and one tab-separated row of the pause", code, out)
	}
	code, out, _ = d.Run(t, true, "audit", "--tenant", "acme", "--since", "1h")
	if code != 0 || out != "No changes recorded.\n" {
		t.Errorf("nothing recorded: exit %d %q", code, out)
	}
}

func TestAuditErrors(t *testing.T) {
	d := newDaemon(t)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stderr   string
		requests int64 // sent to the daemon
	}{
		{"bad since", []string{"--since", "yesterday"}, 2, `--since "yesterday"`, 0},
		{"negative since", []string{"--since", "-1h"}, 2, `--since "-1h"`, 0},
		{"bad limit", []string{"--limit", "5000"}, 2, "--limit 5000", 0},
		{"bad page", []string{"--page", "abc"}, 2, `--page "abc"`, 0},
		{"no such schedule", []string{"--schedule", "nope"}, 1, "not found", 1},
		{"no such tenant name", []string{"--tenant", "Not A Name"}, 2, "tenant", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := d.Requests()
			code, _, errOut := d.Run(t, false, append([]string{"audit"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.stderr)
			}
			if n := d.Requests() - before; n != tc.requests {
				t.Errorf("%d requests sent, want %d", n, tc.requests)
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	now := clitest.FixedNow
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"24h", now.Add(-24 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"0d", now},
		{"2027-03-01T00:00:00Z", time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"2027-03-01T01:00:00+01:00", time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)},
	} {
		got, err := audit.ParseSince(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "d", "-3d", "1w", "yesterday", "2027-03-01"} {
		if _, err := audit.ParseSince(bad, now); err == nil {
			t.Errorf("ParseSince(%q): no error", bad)
		}
	}
}
