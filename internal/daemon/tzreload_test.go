package daemon

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/timetable/tztest"
)

// TestSIGHUPReloadsTZ: a real schedd whose tz database changes under it
// reads it again on SIGHUP and moves the firing of a cron schedule in the
// zone whose rules changed (internal/timetable/testdata/tz: Test/Shift
// moves from UTC-5 to UTC-4 on 2027-02-02 in 2026b), logging what moved.
func TestSIGHUPReloadsTZ(t *testing.T) {
	tztest.Use(t, "2026a")
	d := startTLSDaemon(t) // no TLS flags: plain HTTP on loopback, with the token

	call := func(method, path string, body any, out any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, "http://"+d.addr+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tlsToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	var created api.CreateResult
	call("POST", "/v1/schedules", api.ScheduleRequest{Name: "feb-2", Queue: "q", Cron: "0 9 2 2 *", TimeZone: "Test/Shift"}, &created)
	if at := created.Schedule.NextRunAt; at == nil || !at.Equal(time.Date(2027, 2, 2, 14, 0, 0, 0, time.UTC)) {
		t.Fatalf("cursor under 2026a: %v, want 2027-02-02T14:00:00Z", at)
	}

	tztest.Install(t, "2026b") // the new tz package is installed
	d.reload <- syscall.SIGHUP
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(d.log.String(), `msg="SIGHUP: tz database reloaded"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no tz reload logged after SIGHUP:\n%s", d.log.String())
		}
	}
	logged := d.log.String()
	for _, want := range []string{`msg="tz rules changed: firings moved" zone=Test/Shift tz_version=2026b previous_tz_version=2026a schedules=1 moved=1`,
		`msg="SIGHUP: no certificate to reload (no --tls-cert)"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %s:\n%s", want, logged)
		}
	}
	var sc api.Schedule
	call("GET", "/v1/schedules/feb-2", nil, &sc)
	if sc.NextRunAt == nil || !sc.NextRunAt.Equal(time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("cursor after SIGHUP: %v, want 2027-02-02T13:00:00Z (09:00 at UTC-4)", sc.NextRunAt)
	}
	var st api.Status
	call("GET", "/v1/status", nil, &st)
	if st.TZVersion != "2026b" {
		t.Errorf("status tz_version after SIGHUP: %q, want 2026b", st.TZVersion)
	}
}
