package timetable

import (
	"testing"
	"time"
)

// TestCountFirings: the count in constant time (every, at) agrees with a
// walk of Next, both ends inclusive, and stops at the limit.
func TestCountFirings(t *testing.T) {
	t0 := time.Date(2027, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		def      Definition
		from, to time.Time
		limit    int
	}{
		{"every second, a minute", Definition{Kind: KindEvery, Expr: "1s", TimeZone: "UTC"}, t0, t0.Add(time.Minute), 1000},
		{"every 7s, off the grid", Definition{Kind: KindEvery, Expr: "7s", TimeZone: "UTC"}, t0.Add(500 * time.Millisecond), t0.Add(time.Hour), 10000},
		{"every hour, anchored later", Definition{Kind: KindEvery, Expr: "1h", Anchor: t0.Add(90 * time.Minute), TimeZone: "UTC"}, t0, t0.Add(24 * time.Hour), 1000},
		{"every 10s, capped", Definition{Kind: KindEvery, Expr: "10s", TimeZone: "UTC"}, t0, t0.Add(time.Hour), 5},
		{"at, inside", Definition{Kind: KindAt, Expr: "2027-03-14T05:00:00Z", TimeZone: "UTC"}, t0, t0.Add(5 * time.Hour), 10},
		{"at, outside", Definition{Kind: KindAt, Expr: "2027-03-14T05:00:00Z", TimeZone: "UTC"}, t0, t0.Add(4 * time.Hour), 10},
		{"cron, every 15 minutes", Definition{Kind: KindCron, Expr: "*/15 * * * *", TimeZone: "Europe/Berlin"}, t0, t0.Add(48 * time.Hour), 1000},
		{"cron, capped", Definition{Kind: KindCron, Expr: "* * * * * *", TimeZone: "UTC"}, t0, t0.Add(time.Hour), 100},
		{"empty range", Definition{Kind: KindEvery, Expr: "1s", TimeZone: "UTC"}, t0.Add(time.Second), t0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Parse(tc.def)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for f, ok := sp.Next(tc.from.Add(-time.Nanosecond)); ok && !f.At.After(tc.to) && want < tc.limit; f, ok = sp.Next(f.At) {
				want++
			}
			if got := sp.CountFirings(tc.from, tc.to, tc.limit); got != want {
				t.Errorf("CountFirings = %d, want %d", got, want)
			}
		})
	}
}

// TestCountFiringsFar: a year of every second is counted, not walked.
func TestCountFiringsFar(t *testing.T) {
	sp, err := Parse(Definition{Kind: KindEvery, Expr: "1s", TimeZone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if got, want := sp.CountFirings(from, from.Add(399*24*time.Hour), 1<<40), 399*86400+1; got != want {
		t.Errorf("399 days of every second: %d, want %d", got, want)
	}
}
