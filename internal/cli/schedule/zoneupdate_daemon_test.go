package schedule_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestUpdateZonePrefixDaemon: through schedctl against a real daemon, a
// schedule created in UTC and updated with --cron 'CRON_TZ=Europe/Berlin
// ...' and no --tz is stored in Berlin, its expression without the prefix,
// its next firing the one schedctl preview gives for the prefixed
// expression. A prefix with a --tz naming another zone is refused (exit 2,
// both zones named) before any request. apply -f, which sends a file's
// schedule whole, takes a prefix's zone the same way, and validate accepts
// the file.
func TestUpdateZonePrefixDaemon(t *testing.T) {
	d := clidaemon.New(t, clidaemon.Config{Start: clitest.FixedNow, Shards: 1})
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := d.Run(t, false, args...)
		if code != want {
			t.Fatalf("schedctl %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, out, errOut)
		}
		if want != 0 {
			return errOut
		}
		return out
	}
	decode := func(out string, v any) {
		t.Helper()
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("not the JSON of the contract: %v\n%s", err, out)
		}
	}
	get := func() api.Schedule {
		t.Helper()
		var sc api.Schedule
		decode(run(0, "get", "daily", "-o", "json"), &sc)
		return sc
	}
	// firstFiring is the first firing schedctl preview gives for expr
	// after the daemon's clock.
	firstFiring := func(expr string) time.Time {
		t.Helper()
		var p struct {
			TimeZone string `json:"time_zone"`
			Firings  []struct {
				ScheduledFor time.Time `json:"scheduled_for"`
			} `json:"firings"`
		}
		out := run(0, "preview", expr, "--from", d.Clock.Now().Format(time.RFC3339), "--count", "1", "-o", "json")
		if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Firings) != 1 {
			t.Fatalf("preview %q: %v\n%s", expr, err, out)
		}
		return p.Firings[0].ScheduledFor
	}

	run(0, "create", "--name", "daily", "--queue", "q", "--cron", "0 9 * * *", "--tz", "UTC")
	utcNext := get().NextRunAt

	var res api.ChangeResult
	decode(run(0, "update", "daily", "--cron", "CRON_TZ=Europe/Berlin 0 9 * * *", "-o", "json"), &res)
	sc := res.Schedule
	if sc.Expression != "0 9 * * *" || sc.TimeZone != "Europe/Berlin" || sc.Version != 2 {
		t.Fatalf("updated to %q in %q, version %d; want %q in Europe/Berlin, version 2", sc.Expression, sc.TimeZone, sc.Version, "0 9 * * *")
	}
	want := firstFiring("CRON_TZ=Europe/Berlin 0 9 * * *")
	if sc.NextRunAt == nil || !sc.NextRunAt.Equal(want) || utcNext == nil || utcNext.Equal(want) {
		t.Fatalf("next_run_at %v (was %v in UTC); want %v, Berlin's 09:00", sc.NextRunAt, utcNext, want)
	}
	if got := get(); got.TimeZone != "Europe/Berlin" || got.Version != 2 {
		t.Fatalf("stored in %q, version %d", got.TimeZone, got.Version)
	}

	// A prefix and another zone given in the same update: refused, nothing sent.
	before := d.Requests()
	errOut := run(2, "update", "daily", "--cron", "CRON_TZ=Asia/Tokyo 0 9 * * *", "--tz", "UTC")
	if !strings.Contains(errOut, "--cron") || !strings.Contains(errOut, `"UTC"`) || !strings.Contains(errOut, `"Asia/Tokyo"`) {
		t.Errorf("conflict error %q does not name --cron and both zones", errOut)
	}
	// The update read the schedule back, and sent nothing after.
	if sent := d.Requests() - before; sent != 1 {
		t.Errorf("the refused update sent %d requests; want only the read", sent)
	}
	if got := get(); got.TimeZone != "Europe/Berlin" || got.Version != 2 {
		t.Fatalf("refused update changed the schedule: %q, version %d", got.TimeZone, got.Version)
	}

	// apply -f sends the file's schedule whole: its prefix names the zone.
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("schedules:\n  - name: daily\n    queue: q\n    cron: \"CRON_TZ=Asia/Tokyo 0 9 * * *\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run(0, "validate", "-f", file); !strings.HasSuffix(out, ": 1 schedule, valid\n") {
		t.Errorf("validate printed %q", out)
	}
	run(0, "apply", "-f", file)
	got := get()
	if got.Expression != "0 9 * * *" || got.TimeZone != "Asia/Tokyo" || got.Version != 3 {
		t.Fatalf("applied as %q in %q, version %d; want Asia/Tokyo, version 3", got.Expression, got.TimeZone, got.Version)
	}
	if want := firstFiring("CRON_TZ=Asia/Tokyo 0 9 * * *"); got.NextRunAt == nil || !got.NextRunAt.Equal(want) {
		t.Fatalf("next_run_at %v after apply; want %v", got.NextRunAt, want)
	}
}
