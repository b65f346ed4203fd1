package schedule

import (
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// TestFileZonePrefix: a schedules file may write a cron expression with
// its zone as a Kubernetes CronJob does (CRON_TZ=ZONE ...). validate
// accepts it, apply creates the schedule with the prefix moved into
// time_zone, and the same file then shows no change: the prefix and a
// time_zone field are one setting. A time_zone naming another zone, or an
// unknown zone in the prefix, is refused with the line and field.
func TestFileZonePrefix(t *testing.T) {
	const body = `schedules:
  - name: tokyo
    queue: q
    cron: "CRON_TZ=Asia/Tokyo 0 9 * * *"
  - name: berlin
    queue: q
    cron: "TZ=Europe/Berlin 30 2 * * *"
    time_zone: Europe/Berlin
`
	file := writeFile(t, body)
	f, out, _ := clitest.NewFactory(false)
	if err := validateRun(&ApplyOptions{IO: f, File: file}); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !strings.HasSuffix(out.String(), ": 2 schedules, valid\n") {
		t.Errorf("validate printed %q", out)
	}
	s := clitest.NewStub()
	if got := apply(t, s, file); !strings.Contains(got, "2 created, 0 updated, 0 unchanged") {
		t.Fatalf("apply:\n%s", got)
	}
	for name, want := range map[string][2]string{"tokyo": {"0 9 * * *", "Asia/Tokyo"}, "berlin": {"30 2 * * *", "Europe/Berlin"}} {
		if sc := s.Schedules[name]; sc.Expression != want[0] || sc.TimeZone != want[1] {
			t.Errorf("%s stored as %q in %q, want %q in %q", name, sc.Expression, sc.TimeZone, want[0], want[1])
		}
	}
	if d, err := diff(t, s, file); err != nil || !strings.Contains(d, "No changes: 2 schedules") {
		t.Fatalf("diff after apply: %v\n%s", err, d)
	}
	// The same schedule written the other way is no change either.
	other := writeFile(t, "schedules:\n  - name: tokyo\n    queue: q\n    cron: \"0 9 * * *\"\n    time_zone: Asia/Tokyo\n")
	if d, err := diff(t, s, other); err != nil || !strings.Contains(d, "No changes: 1 schedule") {
		t.Fatalf("diff of the zone as a field: %v\n%s", err, d)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"zones differ", "schedules:\n  - name: a\n    queue: q\n    cron: 'CRON_TZ=Asia/Tokyo 0 9 * * *'\n    time_zone: Europe/Berlin\n",
			`:4: schedule "a" (#1), field cron: time zone "Europe/Berlin" differs from "Asia/Tokyo" in the cron expression's CRON_TZ= prefix`},
		{"unknown zone", "schedules:\n  - name: a\n    queue: q\n    cron: 'CRON_TZ=Mars/Olympus 0 9 * * *'\n",
			`schedule "a" (#1), field time_zone: cron expression's CRON_TZ= prefix: time zone "Mars/Olympus": unknown IANA zone`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, out, _ := clitest.NewFactory(false)
			err := validateRun(&ApplyOptions{IO: f, File: writeFile(t, tc.body)})
			clitest.WantErr(t, err, tc.want, cmdutil.ExitInvalid)
			if out.Len() != 0 {
				t.Errorf("stdout %q", out)
			}
		})
	}
}

// TestCreateFlagsZonePrefix: create takes a prefixed --cron without --tz
// and sends it as written (schedd moves the prefix); with a --tz that
// differs, the error names --cron and both zones before any call.
func TestCreateFlagsZonePrefix(t *testing.T) {
	base := []string{"--name", "n", "--queue", "q", "--cron", "CRON_TZ=Asia/Tokyo 0 9 * * *"}
	f, _, _ := clitest.NewFactory(false)
	var got *CreateOptions
	if err := clitest.Exec(t, NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), base...); err != nil {
		t.Fatalf("prefixed --cron without --tz: %v", err)
	}
	if got == nil || got.Request.Cron != "CRON_TZ=Asia/Tokyo 0 9 * * *" || got.Request.TimeZone != "" {
		t.Fatalf("request %+v", got)
	}
	f, _, _ = clitest.NewFactory(false)
	err := clitest.Exec(t, NewCmdCreate(f, func(*CreateOptions) error { t.Fatal("ran despite the conflict"); return nil }),
		append(base, "--tz", "Europe/Berlin")...)
	clitest.WantErr(t, err, `--cron: time zone "Europe/Berlin" differs from "Asia/Tokyo" in the cron expression's CRON_TZ= prefix`, cmdutil.ExitInvalid)
}
