package sqlite

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store/storetest"
)

// The occurrence insert is OR IGNORE (queries.go): a row it leaves out must
// be a duplicate of the same firing, and anything else fails the whole
// insert, naming the row, with nothing written.
func TestInsertIgnoredRowsFail(t *testing.T) {
	at := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		// prepare runs on the store before the insert.
		prepare func(t *testing.T, s *Store, sc *record.Schedule)
		mut     func(o *record.Occurrence)
		want    string
	}{
		{"a CHECK fails", nil, func(o *record.Occurrence) { o.AttemptFloor = 3 }, "refused by a constraint"},
		{"an empty queue", nil, func(o *record.Occurrence) { o.Queue = "" }, "refused by a constraint"},
		{"the id is another firing's", func(t *testing.T, s *Store, sc *record.Schedule) {
			t.Helper()
			// A row of another firing under the id (an 80-bit hash
			// collision, forged here).
			other := storetest.NewOccurrence(sc, at.Add(time.Hour))
			mustInsertOccs(t, s, other)
			if _, err := s.w.ExecContext(t.Context(), `UPDATE occurrences SET occurrence_id = ? WHERE occurrence_id = ?`,
				record.OccurrenceID(sc.ScheduleID, sc.Version, at), other.OccurrenceID); err != nil {
				t.Fatal(err)
			}
		}, nil, "hash collision"},
		{"a manual id is another key's", func(t *testing.T, s *Store, sc *record.Schedule) {
			t.Helper()
			// The manual row of key "k", forged to carry another key: the
			// id is no longer that row's.
			other := storetest.NewOccurrence(sc, at.Add(time.Hour))
			other.TriggerKey, other.OccurrenceID = "k", record.ManualOccurrenceID(sc.ScheduleID, "k")
			mustInsertOccs(t, s, other)
			if _, err := s.w.ExecContext(t.Context(), `UPDATE occurrences SET trigger_key = 'forged' WHERE occurrence_id = ?`,
				other.OccurrenceID); err != nil {
				t.Fatal(err)
			}
		}, func(o *record.Occurrence) {
			o.TriggerKey, o.OccurrenceID = "k", record.ManualOccurrenceID(o.ScheduleID, "k")
		}, "hash collision"},
	}
	for _, tc := range cases {
		for _, rows := range []int{1, insertChunk + 1} { // the one-row and the multi-row statement
			t.Run(fmt.Sprintf("%s/rows=%d", tc.name, rows), func(t *testing.T) {
				s, _ := openTest(t)
				sc := storetest.NewSchedule("tenant-a", "sch_a")
				if err := s.InsertSchedule(t.Context(), sc); err != nil {
					t.Fatal(err)
				}
				if tc.prepare != nil {
					tc.prepare(t, s, sc)
				}
				before := countOccurrences(t, s)
				// The bad row first, then good ones: in a chunk of
				// insertChunk rows when rows > insertChunk.
				occs := []record.Occurrence{storetest.NewOccurrence(sc, at)}
				if tc.mut != nil {
					tc.mut(&occs[0])
				}
				for i := 1; i < rows; i++ {
					occs = append(occs, storetest.NewOccurrence(sc, at.Add(time.Duration(i)*24*time.Hour)))
				}
				_, err := s.InsertOccurrences(t.Context(), occs)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), occs[0].OccurrenceID) {
					t.Fatalf("InsertOccurrences: %v, want an error naming %s and %q", err, occs[0].OccurrenceID, tc.want)
				}
				if n := countOccurrences(t, s); n != before {
					t.Errorf("%d occurrences after the failed insert, want %d (nothing written)", n, before)
				}
			})
		}
	}

	// A duplicate of the same firing is no error: in one statement and
	// across two.
	s, _ := openTest(t)
	sc := storetest.NewSchedule("tenant-a", "sch_a")
	if err := s.InsertSchedule(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	var occs []record.Occurrence
	for i := range insertChunk {
		occs = append(occs, storetest.NewOccurrence(sc, at.Add(time.Duration(i%(insertChunk/2))*time.Hour)))
	}
	n, err := s.InsertOccurrences(t.Context(), occs)
	if err != nil || n != insertChunk/2 {
		t.Fatalf("InsertOccurrences with duplicates: %d, %v; want %d, nil", n, err, insertChunk/2)
	}
	if n, err := s.InsertOccurrences(t.Context(), occs); err != nil || n != 0 {
		t.Fatalf("InsertOccurrences again: %d, %v; want 0, nil", n, err)
	}
}

func mustInsertOccs(t *testing.T, s *Store, occs ...record.Occurrence) {
	t.Helper()
	if _, err := s.InsertOccurrences(t.Context(), occs); err != nil {
		t.Fatalf("InsertOccurrences: %v", err)
	}
}

func countOccurrences(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.w.QueryRowContext(t.Context(), `SELECT count(*) FROM occurrences`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Occurrences of several shapes in one insert (chunkShape): each chunk of
// insertChunk rows of one shape goes in one statement that binds the shared
// columns once, what is left over goes in row by row, and a replayed row
// (its retry clock not at its firing), a manual one (a trigger key) and a
// dead one with its reason never go in a chunk. Every column of every row
// must come back as given.
func TestInsertChunksKeepEveryColumn(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	at := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	var scs []*record.Schedule
	for i := range 3 {
		sc := storetest.NewSchedule(fmt.Sprintf("tenant-%d", i%2), fmt.Sprintf("sch_%d", i))
		sc.Queue = fmt.Sprintf("queue-%d", i)
		if err := s.InsertSchedule(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	shapes := []func(o *record.Occurrence){
		func(o *record.Occurrence) { o.State, o.EnqueuedAt = record.OccurrenceEnqueued, at.Add(-time.Second) },
		func(o *record.Occurrence) {
			o.State, o.Lane, o.EnqueuedAt = record.OccurrenceEnqueued, record.LaneFlexible, at.Add(-2*time.Second)
			o.AvailableAt = o.ScheduledFor.Add(17 * time.Second)
		},
		func(o *record.Occurrence) { o.State, o.FinishedAt = record.OccurrenceMissed, at.Add(time.Hour) },
		func(o *record.Occurrence) {
			o.State, o.EnqueuedAt, o.AttemptCount, o.AttemptFloor = record.OccurrenceEnqueued, at, 3, 2
			o.FirstClaimedAt, o.OverlapPolicy, o.ShardEpoch = at.Add(time.Minute), record.OverlapQueueOne, 7
		},
		func(o *record.Occurrence) { // replayed: not in a chunk
			o.State, o.EnqueuedAt, o.RetryFrom = record.OccurrenceEnqueued, at, at.Add(48*time.Hour)
		},
		func(o *record.Occurrence) { // manual: not in a chunk
			o.State, o.EnqueuedAt = record.OccurrenceEnqueued, at
			o.TriggerKey = "key " + o.ScheduledFor.Format(time.RFC3339)
			o.OccurrenceID = record.ManualOccurrenceID(o.ScheduleID, o.TriggerKey)
		},
		func(o *record.Occurrence) { // dead, with its reason: not in a chunk
			o.State, o.FinishedAt, o.AttemptCount, o.DeadReason = record.OccurrenceDead, at.Add(time.Hour), 1, record.DeadAttemptsExhausted
		},
	}
	var occs []record.Occurrence
	for i := range 8*insertChunk + 7 { // each shape has a full chunk and some left over
		sc := scs[i%len(scs)]
		o := storetest.NewOccurrence(sc, at.Add(time.Duration(i)*time.Hour))
		shapes[(i/3)%len(shapes)](&o)
		occs = append(occs, o)
	}
	if n, err := s.InsertOccurrences(t.Context(), occs); err != nil || n != len(occs) {
		t.Fatalf("InsertOccurrences: %d, %v; want %d, nil", n, err, len(occs))
	}
	for _, want := range occs {
		got, err := s.GetOccurrence(t.Context(), want.TenantID, want.OccurrenceID)
		if err != nil {
			t.Fatal(err)
		}
		if *got != want {
			t.Errorf("occurrence %s:\n got  %+v\n want %+v", want.OccurrenceID, *got, want)
		}
	}
}
