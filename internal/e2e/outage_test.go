package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// A simulated outage through the real binaries: schedctl starts it, status
// shows it, and a restart of schedd ends it (logged), so that nothing stays
// paused after one.
func TestSimulatedOutageEndsAtRestart(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	type outage struct {
		ID         int64      `json:"id"`
		Active     bool       `json:"active"`
		EndsAt     time.Time  `json:"ends_at"`
		CanceledAt *time.Time `json:"canceled_at"`
	}
	var st struct {
		Outage *outage `json:"outage"`
	}
	d.ctlJSON(&st, "simulate", "outage", "--for", "1h")
	if st.Outage == nil || !st.Outage.Active || time.Until(st.Outage.EndsAt) < 59*time.Minute {
		t.Fatalf("simulate outage --for 1h: %+v; want active for an hour", st.Outage)
	}
	var status struct {
		Outage *outage `json:"outage"`
	}
	d.ctlJSON(&status, "status")
	if status.Outage == nil || status.Outage.ID != st.Outage.ID || !status.Outage.Active {
		t.Errorf("status outage = %+v; want outage %d active", status.Outage, st.Outage.ID)
	}
	if r := d.ctl("simulate", "outage", "--for", "1m"); r.code != 1 || !strings.Contains(r.stderr, "in progress until") {
		t.Errorf("a second outage: %s; want exit 1, in progress", r)
	}

	if code, _ := d.proc.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("schedd after SIGTERM: exit %d", code)
	}
	d.start()
	d.ctlJSON(&st, "simulate", "status")
	if st.Outage != nil {
		t.Errorf("after a restart simulate status = %+v; want none", st.Outage)
	}
	if log := d.log.String(); !strings.Contains(log, "simulated outage ended: a node started") {
		t.Errorf("the restart did not log the end of the outage:\n%s", log)
	}
}
