package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// pagedCase is one list command over a stub holding n rows, 2 a page.
type pagedCase struct {
	name  string
	list  string // the JSON page's list
	idKey string
	seed  func(s *stubAPI, n int)
	run   func(f *Factory, s *stubAPI, json bool, p pageFlags) error
}

func pagedCases() []pagedCase {
	return []pagedCase{
		{"list", "schedules", "name", func(s *stubAPI, n int) {
			for i := range n {
				s.CreateSchedule(bg, api.ScheduleRequest{Name: fmt.Sprintf("s%d", i), Queue: "q", Every: "1h"})
			}
		}, func(f *Factory, s *stubAPI, json bool, p pageFlags) error {
			return listRun(&ListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: json, Paging: p})
		}},
		{"occurrences", "occurrences", "occurrence_id", func(s *stubAPI, n int) {
			for i := range n {
				o := sampleOccurrence()
				o.OccurrenceID, o.ScheduledFor = fmt.Sprintf("occ_%02d", i), fixedNow.Add(time.Duration(i)*time.Minute)
				s.occurrences = append(s.occurrences, o)
			}
		}, func(f *Factory, s *stubAPI, json bool, p pageFlags) error {
			return occurrencesRun(&OccurrencesOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: json, Paging: p})
		}},
		{"dlq list", "occurrences", "occurrence_id", func(s *stubAPI, n int) {
			for i := range n {
				o := sampleOccurrence()
				o.OccurrenceID, o.State = fmt.Sprintf("occ_%02d", i), "DEAD"
				s.dead = append(s.dead, o)
			}
		}, func(f *Factory, s *stubAPI, json bool, p pageFlags) error {
			return dlqListRun(&DLQListOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: json, Paging: p})
		}},
		{"attempts", "attempts", "attempt", func(s *stubAPI, n int) {
			for i := range n {
				s.attempts = append(s.attempts, api.Attempt{Attempt: int64(i + 1), WorkerID: "w", ClaimedAt: fixedNow, LeaseExpiresAt: fixedNow})
			}
		}, func(f *Factory, s *stubAPI, json bool, p pageFlags) error {
			return attemptsRun(&AttemptsOptions{IO: f, API: apiOf(s), Ctx: bg, JSON: json, ID: "occ_01", Paging: p})
		}},
	}
}

// ids reads the ids of a JSON list (an array, as these commands have
// always printed) and the next page's token from the footer on stderr.
func ids(t *testing.T, out []byte, errOut, key string) ([]string, string) {
	t.Helper()
	var got []string
	for _, e := range mustJSON(t, out).([]any) {
		got = append(got, fmt.Sprint(e.(map[string]any)[key]))
	}
	next := ""
	if _, rest, ok := strings.Cut(errOut, "--page "); ok {
		next, _, _ = strings.Cut(rest, " ")
	}
	return got, next
}

// TestPaging: every long list shows one page and says more exist; the
// token it gives reaches the next page; --all reads every row exactly
// once; JSON stays an array, the token on stderr without --all and none
// with it.
func TestPaging(t *testing.T) {
	for _, tc := range pagedCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub()
			s.pageSize = 2
			tc.seed(s, 5)
			jsonRun := func(p pageFlags) ([]string, string, string) {
				t.Helper()
				f, out, errOut := testFactory(false)
				if err := tc.run(f, s, true, p); err != nil {
					t.Fatal(err)
				}
				got, next := ids(t, out.Bytes(), errOut.String(), tc.idKey)
				return got, next, out.String()
			}

			// One page, JSON: the token on stderr.
			first, next, _ := jsonRun(pageFlags{})
			if len(first) != 2 || next == "" {
				t.Fatalf("first page %v, next %q", first, next)
			}
			// Following the tokens by hand reads every row once.
			seen := append([]string(nil), first...)
			for next != "" {
				var page []string
				page, next, _ = jsonRun(pageFlags{Page: next})
				seen = append(seen, page...)
			}
			// --all reads the same rows in one go, with no token.
			all, next, raw := jsonRun(pageFlags{All: true})
			if strings.Join(all, ",") != strings.Join(seen, ",") || len(all) != 5 || next != "" {
				t.Errorf("--all %v (next %q), by hand %v", all, next, seen)
			}
			if strings.Contains(raw, "next_page") {
				t.Errorf("--all JSON has next_page:\n%s", raw)
			}
			// --limit is the page size.
			if got, next, _ := jsonRun(pageFlags{Limit: 4}); len(got) != 4 || next == "" {
				t.Errorf("--limit 4: %v, next %q", got, next)
			}

			// The table's footer: after the table on a terminal, on stderr
			// elsewhere so the rows stay clean.
			f, out, errOut := testFactory(true)
			if err := tc.run(f, s, false, pageFlags{}); err != nil {
				t.Fatal(err)
			}
			footer := "shown; more exist. Next page: --page asc:2 (same flags), or --all for every page.\n"
			if !strings.HasSuffix(out.String(), footer) || errOut.Len() != 0 {
				t.Errorf("tty footer:\n%s\nstderr %q", out, errOut)
			}
			f, out, errOut = testFactory(false)
			if err := tc.run(f, s, false, pageFlags{}); err != nil {
				t.Fatal(err)
			}
			if strings.Count(out.String(), "\n") != 2 || strings.Contains(out.String(), "more exist") || !strings.HasSuffix(errOut.String(), footer) {
				t.Errorf("plain: stdout %q, stderr %q", out, errOut)
			}
			// No footer on the last page, nor with --all.
			for _, p := range []pageFlags{{All: true}, {Page: "asc:4"}} {
				f, out, errOut = testFactory(true)
				if err := tc.run(f, s, false, p); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(out.String()+errOut.String(), "more exist") {
					t.Errorf("%+v: footer on the last page:\n%s", p, out)
				}
			}
		})
	}
}

// TestReverse: occurrences and dlq list ask for newest first; a token of
// one order is refused in the other as invalid input.
func TestReverse(t *testing.T) {
	for _, tc := range pagedCases()[1:3] {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub()
			s.pageSize = 2
			tc.seed(s, 5)
			f, out, _ := testFactory(false)
			if err := tc.run(f, s, true, pageFlags{Reverse: true, All: true}); err != nil {
				t.Fatal(err)
			}
			if got, _ := ids(t, out.Bytes(), tc.list, tc.idKey); strings.Join(got, ",") != "occ_04,occ_03,occ_02,occ_01,occ_00" {
				t.Errorf("newest first: %v", got)
			}
			if !s.lastList.Reverse && !s.lastDLQ.Reverse {
				t.Error("order=desc not asked for")
			}
			f, _, _ = testFactory(false)
			err := tc.run(f, s, true, pageFlags{Reverse: true, Page: "asc:2"})
			wantErr(t, err, "page: not a token of this list in this order", ExitInvalid)
		})
	}
}

func TestPagingFlags(t *testing.T) {
	f, _, _ := testFactory(false)
	var oc *OccurrencesOptions
	if err := execCmd(t, NewCmdOccurrences(f, func(o *OccurrencesOptions) error { oc = o; return nil }),
		"--limit", "50", "--all", "--reverse", "--page", "tok"); err != nil || oc.Paging != (pageFlags{Limit: 50, All: true, Reverse: true, Page: "tok"}) {
		t.Errorf("occurrences: %v %+v", err, oc)
	}
	var dl *DLQListOptions
	if err := execCmd(t, NewCmdDLQList(f, func(o *DLQListOptions) error { dl = o; return nil }),
		"--schedule", "nightly", "--queue", "q", "--reverse", "--all"); err != nil ||
		dl.Schedule != "nightly" || dl.Queue != "q" || dl.Paging != (pageFlags{All: true, Reverse: true}) {
		t.Errorf("dlq list: %v %+v", err, dl)
	}
	var ls *ListOptions
	if err := execCmd(t, NewCmdList(f, func(o *ListOptions) error { ls = o; return nil }), "--all", "--limit", "1000"); err != nil ||
		ls.Paging != (pageFlags{All: true, Limit: 1000}) {
		t.Errorf("list: %v %+v", err, ls)
	}
	var at *AttemptsOptions
	if err := execCmd(t, NewCmdAttempts(f, func(o *AttemptsOptions) error { at = o; return nil }), "occ_1", "--limit", "3", "--page", "p"); err != nil ||
		at.Paging != (pageFlags{Limit: 3, Page: "p"}) {
		t.Errorf("attempts: %v %+v", err, at)
	}
	wantErr(t, execCmd(t, NewCmdList(f, func(*ListOptions) error { return nil }), "--limit", "1001"), "--limit 1001: must be from 1 to 1000", ExitInvalid)
	wantErr(t, execCmd(t, NewCmdAttempts(f, func(*AttemptsOptions) error { return nil }), "occ_1", "--limit", "-1"), "--limit -1", ExitInvalid)
	// schedd sorts schedules and attempts one way only.
	for _, args := range [][]string{{"list", "--reverse"}, {"attempts", "occ_1", "--reverse"}} {
		root := NewRootCmd(f)
		root.SetArgs(args)
		if err := root.Execute(); err == nil || ExitCode(err) != ExitInvalid || !strings.Contains(err.Error(), "unknown flag: --reverse") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
