package timetable

import "testing"

func TestGapOnly(t *testing.T) {
	tests := []struct {
		name, expr, zone string
		gap              GapPolicy
		want             bool
		first            string // FormatWall of the first skipped wall time, when want
	}{
		{"second Sunday of March at 02:30 in New York", "30 2 * 3 0#2", "America/New_York", GapSkip, true, "2038-03-14T02:30:00"},
		{"the same with shift fires at 03:00", "30 2 * 3 0#2", "America/New_York", GapShift, false, ""},
		{"last Sunday of March at 02:30 in Berlin", "30 2 * 3 0L", "Europe/Berlin", GapSkip, true, "2038-03-28T02:30:00"},
		{"second and third Sundays: the third fires", "30 2 * 3 0#2,0#3", "America/New_York", GapSkip, false, ""},
		{"the same time in a zone without DST", "30 2 * 3 0#2", "Asia/Tokyo", GapSkip, false, ""},
		{"every day at 02:30 fires on the other days", "30 2 * * *", "America/New_York", GapSkip, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(Definition{Kind: KindCron, Expr: tt.expr, TimeZone: tt.zone, DSTGap: tt.gap})
			if err != nil {
				t.Fatal(err)
			}
			first, got := s.GapOnly()
			if got != tt.want {
				t.Fatalf("GapOnly = %v, want %v", got, tt.want)
			}
			if tt.want && FormatWall(first.Wall) != tt.first {
				t.Errorf("first skipped wall time %s, want %s", FormatWall(first.Wall), tt.first)
			}
		})
	}
	at, err := Parse(Definition{Kind: KindAt, Expr: "2027-03-14T02:30:00-04:00", TimeZone: "America/New_York"})
	if err != nil {
		t.Fatal(err)
	}
	if _, got := at.GapOnly(); got {
		t.Error("an at timetable is never gap-only")
	}
}
