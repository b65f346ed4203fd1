package e2e

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sched-dev/sched/api"
)

// schedd runs schedd with args in the daemon's environment and returns what
// it did, like ctl does for schedctl.
func (d *daemon) schedd(args ...string) result {
	d.t.Helper()
	cmd := exec.Command(scheddBin, args...)
	cmd.Env = d.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{args: append([]string{"(schedd)"}, args...), stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		d.t.Fatalf("run schedd %v: %v", args, err)
	}
	return r
}

// The what-if simulator through the real binaries: schedctl asks a running
// schedd, schedd simulate runs it without one, and both answer the same
// JSON for the same file; the daemon's own store gets no schedule from it.
func TestWhatIfThroughBinaries(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	file := filepath.Join(d.dir, "schedules.yaml")
	yaml := "schedules:\n" +
		"  - name: every-minute\n    queue: q\n    every: 1m\n    misfire_policy: catch_up:3\n" +
		"  - name: hourly\n    queue: q\n    cron: \"0 * * * *\"\n    time_zone: Europe/Berlin\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", file, "--from", "2027-03-15T09:30:00Z", "--to", "2027-03-15T10:30:00Z",
		"--outage", "2027-03-15T09:55:00Z/2027-03-15T10:05:00Z"}
	viaDaemon := d.ctlJSON(nil, append([]string{"simulate"}, args...)...)
	offline := d.schedd(append([]string{"simulate", "-o", "json"}, args...)...)
	if offline.code != 0 {
		t.Fatalf("%s", offline)
	}
	if viaDaemon.stdout != offline.stdout {
		t.Errorf("schedctl simulate and schedd simulate differ:\n%s\n---\n%s", viaDaemon.stdout, offline.stdout)
	}
	var res api.SimulateResult
	if err := json.Unmarshal([]byte(offline.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Schedules) != 2 || res.Summary.Outcomes["CAUGHT_UP"] == 0 || res.Summary.Outcomes["MISSED"] == 0 {
		t.Errorf("simulation summary %+v; want two schedules, some caught up and some missed", res.Summary)
	}
	var list []schedule
	d.ctlJSON(&list, "list")
	if len(list) != 0 {
		t.Errorf("the simulation left %d schedules in the daemon's store", len(list))
	}
	if r := d.ctl("simulate", "-f", file, "--from", "2027-03-15T09:30:00Z", "--to", "2027-06-15T09:30:00Z"); r.code != 2 || !strings.Contains(r.stderr, "to") {
		t.Errorf("a simulation of three months: %s; want exit 2 naming to", r)
	}
}

// The reconciler through the real binaries: schedctl reconcile finds a
// running daemon's store clean; schedd reconcile refuses to open the file
// beside that daemon; once the daemon is down and an occurrence row is
// deleted behind its back, schedd reconcile names the firing and exits 1.
func TestReconcileThroughBinaries(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	d.ctlJSON(nil, "create", "--name", "tick", "--queue", "q", "--every", "1s")
	var rep api.ReconcileReport
	poll(t, "three firings of tick due and planned", func() (bool, string) {
		r := d.ctlJSON(&rep, "reconcile")
		return rep.Totals.Pending >= 3, r.stdout
	})
	if rep.Problem || rep.Totals.Absent != 0 || rep.Totals.Unexpected != 0 {
		t.Fatalf("a running daemon's store: %+v; want clean", rep)
	}
	if r := d.schedd("reconcile", "--store", "sqlite:"+d.store); r.code != 3 || !strings.Contains(r.stderr, "schedctl reconcile") {
		t.Errorf("schedd reconcile beside the daemon: %s; want exit 3 (it could not audit) pointing to schedctl reconcile", r)
	}
	if code, _ := d.proc.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("schedd after SIGTERM: exit %d", code)
	}

	db, err := sql.Open("sqlite", d.store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	now := time.Now().UnixMilli()
	if err := db.QueryRow(`SELECT occurrence_id FROM occurrences WHERE scheduled_for < ? ORDER BY scheduled_for LIMIT 1`, now).Scan(&id); err != nil {
		t.Fatalf("an occurrence in the past: %v", err)
	}
	if _, err := db.Exec(`DELETE FROM occurrences WHERE occurrence_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r := d.schedd("reconcile", "--store", "sqlite:"+d.store, "-o", "json")
	if r.code != 1 {
		t.Fatalf("%s; want exit 1", r)
	}
	rep = api.ReconcileReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Absent) != 1 || rep.Absent[0].OccurrenceID != id || rep.Absent[0].Name != "tick" || len(rep.Unexpected) != 0 {
		t.Errorf("after deleting %s: absent %+v, unexpected %+v; want that one absent", id, rep.Absent, rep.Unexpected)
	}
	if r := d.schedd("reconcile", "--store", "sqlite:"+d.store, "--from", "yesterday"); r.code != 2 || !strings.Contains(r.stderr, "--from") {
		t.Errorf("a bad --from: %s; want exit 2 naming --from", r)
	}
}
