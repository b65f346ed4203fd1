package simulate_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// start is the daemon's virtual clock at the start of every test.
var start = time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)

func newDaemon(t *testing.T) *clidaemon.Daemon {
	return clidaemon.New(t, clidaemon.Config{Start: start})
}

func decode(t *testing.T, s string) api.SimulatedOutageStatus {
	t.Helper()
	var st api.SimulatedOutageStatus
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("not the status JSON: %v\n%s", err, s)
	}
	return st
}

// TestOutageCommands drives simulate outage, status and cancel through
// schedctl's root against a real daemon: tables, JSON and exit codes.
func TestOutageCommands(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)

	code, out, errOut := d.Run(t, true, "simulate", "status")
	if code != 0 || out != "No simulated outage is in progress.\n" || errOut != "" {
		t.Errorf("status with none = %d %q %q", code, out, errOut)
	}
	code, out, _ = d.Run(t, false, "simulate", "outage")
	if code != 0 || out != "No simulated outage is in progress.\n" {
		t.Errorf("outage without flags, not a tty, with none = %d %q; want the sentence", code, out)
	}
	code, out, _ = d.Run(t, false, "--no-headers", "simulate", "outage")
	if code != 0 || out != "" {
		t.Errorf("outage without flags, --no-headers, with none = %d %q; want nothing", code, out)
	}

	code, out, errOut = d.Run(t, true, "simulate", "outage", "--for", "10m", "--shards", "3,1")
	want := "OUTAGE  STATE   SHARDS  STARTED AT            ENDS AT               LEFT   CANCELED AT  BY\n" +
		"1       active  1,3     2027-01-04T10:00:00Z  2027-01-04T10:10:00Z  10m0s  -            node-a\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("outage --for 10m --shards 3,1 = %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	if o := d.Engine.Outages.InProgress(); o == nil || len(o.Shards) != 2 {
		t.Errorf("the engine's outage = %+v; want shards 1 and 3", o)
	}

	d.Clock.Advance(4 * time.Minute)
	code, out, _ = d.Run(t, false, "simulate", "status")
	if want := "OUTAGE\tSTATE\tSHARDS\tSTARTED AT\tENDS AT\tLEFT\tCANCELED AT\tBY\n" +
		"1\tactive\t1,3\t2027-01-04T10:00:00Z\t2027-01-04T10:10:00Z\t6m0s\t-\tnode-a\n"; code != 0 || out != want {
		t.Errorf("status, not a tty = %d %q; want %q", code, out, want)
	}
	code, out, _ = d.Run(t, false, "simulate", "outage", "-o", "json")
	st := decode(t, out)
	if code != 0 || st.Outage == nil || !st.Outage.Active || st.Outage.Remaining != "6m0s" || !st.Now.Equal(start.Add(4*time.Minute)) ||
		st.Outage.CanceledAt != nil || st.Outage.CreatedBy != "node-a" || st.Outage.ID != 1 {
		t.Errorf("outage -o json = %d %+v", code, st.Outage)
	}
	var raw struct{ Outage map[string]any }
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(raw.Outage)), " "); got != "active canceled_at created_by ends_at id remaining shards started_at" {
		t.Errorf("outage JSON fields: %s", got)
	}

	// Another one while it runs: a conflict, exit 1, naming its end.
	code, _, errOut = d.Run(t, true, "simulate", "outage", "--for", "1m")
	if code != 1 || !strings.Contains(errOut, "in progress until 2027-01-04T10:10:00Z") {
		t.Errorf("a second outage = %d %q; want exit 1 naming the end", code, errOut)
	}
	// Bad input: exit 2, naming the bad part.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--for", "soon"}, `"soon"`},
		{[]string{"--for", "0s"}, "for"},
		{[]string{"--for", "25h"}, "for"},
		{[]string{"--shards", "1"}, "--shards needs --for"},
		{[]string{"--for", "1m", "--shards", "1,x"}, `"x" is not a shard number`},
		{[]string{"--for", "1m", "--shards", "9"}, "shard 9"},
	} {
		code, _, errOut := d.Run(t, false, append([]string{"simulate", "outage"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("outage %v = %d %q; want exit 2 with %q", c.args, code, errOut, c.want)
		}
	}

	code, out, _ = d.Run(t, false, "simulate", "cancel", "-o", "json")
	st = decode(t, out)
	if code != 0 || st.Outage == nil || st.Outage.Active || st.Outage.CanceledAt == nil || !st.Outage.CanceledAt.Equal(start.Add(4*time.Minute)) {
		t.Errorf("cancel -o json = %d %+v; want outage 1 canceled at 10:04", code, st.Outage)
	}
	code, out, _ = d.Run(t, true, "simulate", "cancel")
	if code != 0 || out != "No simulated outage was in progress.\n" {
		t.Errorf("cancel with none = %d %q", code, out)
	}
	code, out, _ = d.Run(t, false, "simulate", "status", "-o", "json")
	if st := decode(t, out); code != 0 || st.Outage != nil {
		t.Errorf("status -o json after cancel = %d %+v; want outage null", code, st.Outage)
	}

	// A cancel shown as a table.
	d.Run(t, true, "simulate", "outage", "--for", "30s")
	d.Clock.Advance(10 * time.Second)
	code, out, _ = d.Run(t, true, "simulate", "cancel")
	want = "OUTAGE  STATE     SHARDS  STARTED AT            ENDS AT               LEFT  CANCELED AT           BY\n" +
		"2       canceled  all     2027-01-04T10:04:00Z  2027-01-04T10:04:30Z  0s    2027-01-04T10:04:10Z  node-a\n"
	if code != 0 || out != want {
		t.Errorf("cancel as a table = %d\n%s\nwant\n%s", code, out, want)
	}
}

// The simulate root is the what-if form: without -f it is bad input that
// says so, and its help lists the three outage commands beside its flags.
func TestSimulateRoot(t *testing.T) {
	t.Parallel()
	f, _, errOut := clitest.NewFactory(false)
	if code := cli.Run(f, []string{"simulate"}); code != 2 || !strings.Contains(errOut.String(), "-f FILE is required") {
		t.Errorf("simulate without -f: exit %d, stderr %q; want 2 naming -f", code, errOut)
	}
	f, out, _ := clitest.NewFactory(false)
	if code := cli.Run(f, []string{"simulate", "--help"}); code != 0 {
		t.Fatalf("simulate --help: exit %d", code)
	}
	for _, want := range []string{"\n  outage ", "\n  cancel ", "\n  status ", "--outage", "--worker-duration"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("simulate's help lacks %q:\n%s", want, out)
		}
	}
}
