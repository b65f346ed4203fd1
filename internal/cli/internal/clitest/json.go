package clitest

import (
	"sort"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// JSONCase runs one command's run function with -o json against a stub
// holding fully populated records.
type JSONCase struct {
	Name string
	Run  func(f *cmdutil.Factory, s *Stub) error
	// Keys are the JSON field names, pinned: top-level keys of an object,
	// or of an array's first element; nested "a.b" for objects inside.
	Keys []string
	// List is "" except for objects holding a list (unused today: the
	// lists print bare arrays).
	List string
}

// OccurrenceKeys are the fields of an occurrence: in occurrences, ack,
// nack, dlq list and dlq replay.
var OccurrenceKeys = []string{"attempt_count", "available_at", "claim_lag", "dead_reason", "delivery_lag", "due", "enqueued_at",
	"finished_at", "first_claimed_at", "lane", "last_error", "manual", "occurrence_id", "queue", "schedule_id", "schedule_lag",
	"schedule_version", "scheduled_for", "state", "waiting"}

// CheckJSONFields pins the JSON field names of every command of cases,
// each run on a stub seeded makes: scripts depend on them (gh's
// jsonfieldstest). A failure here means a breaking change to the JSON
// contract.
func CheckJSONFields(t *testing.T, seeded func() *Stub, cases []JSONCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			f, out, _ := NewFactory(false)
			s := seeded()
			if err := tc.Run(f, s); err != nil {
				t.Fatal(err)
			}
			v := MustJSON(t, out.Bytes())
			if tc.List != "" {
				page, ok := v.(map[string]any)
				if !ok || len(page) != 1 {
					t.Fatalf("not a page object with %q alone: %s", tc.List, out)
				}
				v = page[tc.List]
			}
			if a, ok := v.([]any); ok {
				if len(a) == 0 {
					t.Fatalf("empty array: %s", out)
				}
				v = a[0]
			}
			obj, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("not an object: %s", out)
			}
			var got []string
			for k := range obj {
				got = append(got, k)
			}
			sort.Strings(got)
			want := append([]string(nil), tc.Keys...)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("JSON fields\n got %v\nwant %v", got, want)
			}
		})
	}
}
