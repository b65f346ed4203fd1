package tui

import (
	"testing"
	"time"
)

func TestFmtDur(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{840 * time.Microsecond, "840µs"},
		{41 * time.Millisecond, "41ms"},
		{-12 * time.Millisecond, "-12ms"},
		{2710 * time.Millisecond, "2.71s"},
		{8 * time.Second, "8s"},
		{31200 * time.Millisecond, "31.2s"},
		{-31200 * time.Millisecond, "-31.2s"},
		{83900 * time.Millisecond, "1m24s"},
		{192 * time.Second, "3m12s"},
		{2*time.Hour + 5*time.Minute + 40*time.Second, "2h06m"},
		{76 * time.Hour, "3d04h"},
	} {
		if got := fmtDur(c.d); got != c.want {
			t.Errorf("fmtDur(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestFmtCounts(t *testing.T) {
	for _, c := range []struct {
		n           int64
		full, short string
	}{
		{0, "0", "0"}, {950, "950", "950"}, {1450, "1,450", "1.4k"}, {70311, "70,311", "70k"},
		{1_500_000, "1,500,000", "1.5M"}, {-1200, "-1,200", "-1200"},
	} {
		if got := fmtCount(c.n); got != c.full {
			t.Errorf("fmtCount(%d) = %q, want %q", c.n, got, c.full)
		}
		if got := fmtShort(c.n); got != c.short {
			t.Errorf("fmtShort(%d) = %q, want %q", c.n, got, c.short)
		}
	}
}

func TestHuman(t *testing.T) {
	for in, want := range map[string]string{"5m0s": "5m", "6h0m0s": "6h", "1m30s": "1m30s", "10s": "10s", "1h30m0s": "1h30m"} {
		if got := human(in); got != want {
			t.Errorf("human(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	if got := clean("evil\x1b[2Jname\nnext"); got != "evil?[2Jname next" {
		t.Errorf("clean: %q", got)
	}
}

func TestSparkline(t *testing.T) {
	vals := []float64{0, 1, 2, 4, 8, 3}
	ok := []bool{true, true, true, true, true, false}
	if got := sparkline(vals, ok, 10); got != "▁▂▃▅█ " {
		t.Errorf("sparkline = %q", got)
	}
	if got := sparkline(vals, ok, 3); got != "▅█ " { // the newest fit
		t.Errorf("narrow sparkline = %q", got)
	}
}

func TestBarChart(t *testing.T) {
	// Two rows of eighths: 16 levels; a single firing next to a cliff still
	// shows, and nothing is blank.
	got := barChart([]int64{0, 1, 8, 16}, 2, 0)
	want := []string{"   █", " ▁██"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("barChart = %q, want %q", got, want)
	}
}

// TestActivity pins what the LAG and FAIL columns mean.
func TestActivity(t *testing.T) {
	f := newFixture(1)
	act := computeActivity(f.succeeded, f.enqueued, f.dead)
	for _, c := range []struct {
		id       string
		lag      string
		waiting  bool
		failures int
	}{
		// Waiting for a worker for 3m12s: later than its last delivery.
		{"sch_email", "3m12s", true, 1},
		// Newest success 1m24s late; one retried, one dead.
		{"sch_nightly", "1m24s", false, 2},
		// Three retried successes and a dead one.
		{"sch_eusync", "120ms", false, 4},
		{"sch_cache", "41ms", false, 1},
	} {
		a := act[c.id]
		if !a.hasLag || fmtDur(a.lag) != c.lag || a.waiting != c.waiting || a.failures != c.failures {
			t.Errorf("%s: %+v, want lag %s waiting %v failures %d", c.id, a, c.lag, c.waiting, c.failures)
		}
	}
	if a, ok := act["sch_quarter"]; ok {
		t.Errorf("a schedule with no recent occurrence has activity %+v", a)
	}
}
