package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads the daemon's /metrics over its socket, as Prometheus would
// (through a socket-aware proxy), and parses it with Prometheus's own
// parser: a failure to parse fails the test.
func (d *daemon) scrape() map[string]*dto.MetricFamily {
	d.t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", d.sock)
		},
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://schedd/metrics")
	if err != nil {
		d.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		d.t.Fatalf("GET /metrics: %d %v: %s", resp.StatusCode, err, raw)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		d.t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

// value is the sum of the series of family name whose labels include
// every pair in match (name=value, ...): a counter's or gauge's value, a
// histogram's sample count.
func value(fams map[string]*dto.MetricFamily, name string, match ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	var sum float64
outer:
	for _, m := range f.Metric {
		for _, kv := range match {
			k, v, _ := strings.Cut(kv, "=")
			found := false
			for _, l := range m.Label {
				found = found || l.GetName() == k && l.GetValue() == v
			}
			if !found {
				continue outer
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// statusJSON is the part of `schedctl status -o json` this test reads.
type statusJSON struct {
	DeliveryLag struct {
		LastMinute struct {
			Count int64   `json:"count"`
			P99   *string `json:"p99"`
		} `json:"last_minute"`
	} `json:"delivery_lag"`
	DueBacklog []struct {
		Due int64 `json:"due"`
	} `json:"due_backlog"`
	OldestReady *struct {
		Age string `json:"age"`
	} `json:"oldest_ready"`
	Queues []struct {
		Queue string `json:"queue"`
		State string `json:"state"`
		Ready int64  `json:"ready"`
	} `json:"queues"`
	LastHour struct {
		Missed int64 `json:"missed"`
		Claims int64 `json:"claims"`
	} `json:"last_hour"`
}

// TestLagBacklogAndOutageAreVisible drives the real binaries through what
// an operator watches: a schedule firing every second with no worker
// (the ready age and the backlog grow), then a slow worker (the delivery
// lag histogram fills with late deliveries), then none again, then a
// daemon outage longer than max_lateness, which must show up as MISSED in
// both /metrics and status.
func TestLagBacklogAndOutageAreVisible(t *testing.T) {
	t.Parallel()
	// A horizon of 1s: firings are materialized just ahead of their time,
	// so the firings of an outage are found late at the restart rather
	// than already on the queue.
	d := startDaemon(t, "--horizon", "1s")
	d.ctlJSON(nil, "create", "--name", "tick", "--queue", "lag", "--every", "1s", "--max-lateness", "2s")

	// No worker: occurrences wait, and every view says so.
	poll(t, "the ready age and the due backlog in /metrics", func() (bool, string) {
		f := d.scrape()
		age, due := value(f, "sched_oldest_ready_seconds"), value(f, "sched_due_backlog", "window=1m")
		return age >= 3 && due > 0, fmt.Sprintf("oldest ready %vs, due in 1m %v", age, due)
	})
	var st statusJSON
	d.ctlJSON(&st, "status")
	ready := int64(0)
	for _, q := range st.Queues {
		if q.Queue == "lag" && q.State == "ENQUEUED" {
			ready += q.Ready
		}
	}
	var backlog int64
	for _, b := range st.DueBacklog {
		backlog += b.Due
	}
	if st.OldestReady == nil || ready < 3 || backlog == 0 || len(st.DueBacklog) != 60 {
		t.Fatalf("status without a worker: oldest ready %+v, %d ready, backlog %d over %d minutes", st.OldestReady, ready, backlog, len(st.DueBacklog))
	}

	// A slow worker: it takes the backlog late, and the histogram shows it.
	file := filepath.Join(d.dir, "deliveries")
	w := d.worker("slow", "--queue", "lag", "--", "sh", "-c", recordCmd+"\nsleep 0.3", "sh", file)
	poll(t, "late deliveries in the delivery lag histogram", func() (bool, string) {
		f := d.scrape()
		n := value(f, "sched_delivery_lag_seconds")
		late := -1.0
		if h := f["sched_delivery_lag_seconds"]; h != nil {
			// Over every series (each lane of the default tenant is
			// there from the start): the samples above the first bound
			// of 2 s or more (2.5 s).
			late = n
			for _, m := range h.Metric {
				for _, b := range m.GetHistogram().GetBucket() {
					if b.GetUpperBound() >= 2 {
						late -= float64(b.GetCumulativeCount())
						break
					}
				}
			}
		}
		return n >= 5 && late >= 1, fmt.Sprintf("%v samples, %v later than 2.5s", n, late)
	})
	// Once the worker has caught up, nothing waits long: the ready age
	// falls back.
	poll(t, "the ready age to fall once the worker caught up", func() (bool, string) {
		age := value(d.scrape(), "sched_oldest_ready_seconds")
		return age >= 0 && age < 2, fmt.Sprintf("oldest ready %vs", age)
	})
	if code, _ := w.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("worker exited %d after SIGTERM", code)
	}
	d.ctlJSON(&st, "status")
	if st.DeliveryLag.LastMinute.Count == 0 || st.DeliveryLag.LastMinute.P99 == nil || st.LastHour.Claims == 0 {
		t.Fatalf("status after the worker: delivery lag %+v, claims %d", st.DeliveryLag.LastMinute, st.LastHour.Claims)
	}

	// An outage longer than max_lateness (2s): the firings of the gap
	// but the latest are MISSED (fire_once), in /metrics and in status.
	if code, _ := d.proc.signal(t, syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("schedd exited %d after SIGTERM", code)
	}
	down := time.Now()
	poll(t, "the outage to outlast max_lateness", func() (bool, string) {
		return time.Since(down) > 5*time.Second, ""
	})
	d.start()
	poll(t, "MISSED after the outage in /metrics and status", func() (bool, string) {
		missed := value(d.scrape(), "sched_occurrences_missed_total")
		d.ctlJSON(&st, "status")
		return missed >= 1 && st.LastHour.Missed >= 1, fmt.Sprintf("/metrics missed %v, status missed %d", missed, st.LastHour.Missed)
	})
}

// TestTriggerTwiceWithOneKey fires a schedule by hand twice with one key
// through schedctl: one manual occurrence.
func TestTriggerTwiceWithOneKey(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	d.ctlJSON(nil, "create", "--name", "report", "--queue", "reports", "--cron", "0 3 * * *", "--tz", "Europe/Berlin")
	type trig struct {
		Occurrence struct {
			OccurrenceID string `json:"occurrence_id"`
			Manual       bool   `json:"manual"`
		} `json:"occurrence"`
		Created bool `json:"created"`
	}
	var a, b trig
	d.ctlJSON(&a, "trigger", "report", "--idempotency-key", "rerun-2027-01-04")
	d.ctlJSON(&b, "trigger", "report", "--idempotency-key", "rerun-2027-01-04")
	if !a.Created || b.Created || a.Occurrence.OccurrenceID != b.Occurrence.OccurrenceID || !a.Occurrence.Manual {
		t.Fatalf("trigger twice with one key: %+v then %+v", a, b)
	}
	manual := 0
	for _, o := range d.occurrences("report") {
		if o.Manual {
			manual++
		}
	}
	if manual != 1 {
		t.Fatalf("%d manual occurrences, want 1", manual)
	}
}
