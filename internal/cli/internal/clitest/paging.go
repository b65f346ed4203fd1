package clitest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// PagedCase is one list command over a stub holding n rows, 2 a page.
type PagedCase struct {
	Name  string
	List  string // the JSON page's list
	IDKey string
	// Seed puts n rows in s.
	Seed func(s *Stub, n int)
	// Run lists them with p, as JSON or a table.
	Run func(f *cmdutil.Factory, s *Stub, json bool, p cmdutil.PageFlags) error
}

// ids reads the ids of a JSON list (an array, as these commands have
// always printed) and the next page's token from the footer on stderr.
func ids(t *testing.T, out []byte, errOut, key string) ([]string, string) {
	t.Helper()
	var got []string
	for _, e := range MustJSON(t, out).([]any) {
		got = append(got, fmt.Sprint(e.(map[string]any)[key]))
	}
	next := ""
	if _, rest, ok := strings.Cut(errOut, "--page "); ok {
		next, _, _ = strings.Cut(rest, " ")
	}
	return got, next
}

// CheckPaging: every long list of cases shows one page and says more
// exist; the token it gives reaches the next page; --all reads every row
// exactly once; JSON stays an array, the token on stderr without --all
// and none with it. newStub makes the stub each case seeds.
func CheckPaging(t *testing.T, newStub func() *Stub, cases []PagedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := newStub()
			s.PageSize = 2
			tc.Seed(s, 5)
			jsonRun := func(p cmdutil.PageFlags) ([]string, string, string) {
				t.Helper()
				f, out, errOut := NewFactory(false)
				if err := tc.Run(f, s, true, p); err != nil {
					t.Fatal(err)
				}
				got, next := ids(t, out.Bytes(), errOut.String(), tc.IDKey)
				return got, next, out.String()
			}

			// One page, JSON: the token on stderr.
			first, next, _ := jsonRun(cmdutil.PageFlags{})
			if len(first) != 2 || next == "" {
				t.Fatalf("first page %v, next %q", first, next)
			}
			// Following the tokens by hand reads every row once.
			seen := append([]string(nil), first...)
			for next != "" {
				var page []string
				page, next, _ = jsonRun(cmdutil.PageFlags{Page: next})
				seen = append(seen, page...)
			}
			// --all reads the same rows in one go, with no token.
			all, next, raw := jsonRun(cmdutil.PageFlags{All: true})
			if strings.Join(all, ",") != strings.Join(seen, ",") || len(all) != 5 || next != "" {
				t.Errorf("--all %v (next %q), by hand %v", all, next, seen)
			}
			if strings.Contains(raw, "next_page") {
				t.Errorf("--all JSON has next_page:\n%s", raw)
			}
			// --limit is the page size.
			if got, next, _ := jsonRun(cmdutil.PageFlags{Limit: 4}); len(got) != 4 || next == "" {
				t.Errorf("--limit 4: %v, next %q", got, next)
			}

			// The table's footer: after the table on a terminal, on stderr
			// elsewhere so the rows stay clean.
			f, out, errOut := NewFactory(true)
			if err := tc.Run(f, s, false, cmdutil.PageFlags{}); err != nil {
				t.Fatal(err)
			}
			footer := "shown; more exist. Next page: --page asc:2 (same flags), or --all for every page.\n"
			if !strings.HasSuffix(out.String(), footer) || errOut.Len() != 0 {
				t.Errorf("tty footer:\n%s\nstderr %q", out, errOut)
			}
			// Piped: the header and the page's two rows; with --no-headers
			// the rows alone.
			for _, noHeaders := range []bool{false, true} {
				f, out, errOut = NewFactory(false)
				f.NoHeaders = noHeaders
				if err := tc.Run(f, s, false, cmdutil.PageFlags{}); err != nil {
					t.Fatal(err)
				}
				lines := 3
				if noHeaders {
					lines = 2
				}
				if strings.Count(out.String(), "\n") != lines || strings.Contains(out.String(), "more exist") || !strings.HasSuffix(errOut.String(), footer) {
					t.Errorf("plain (no headers %v): stdout %q, stderr %q", noHeaders, out, errOut)
				}
			}
			// No footer on the last page, nor with --all.
			for _, p := range []cmdutil.PageFlags{{All: true}, {Page: "asc:4"}} {
				f, out, errOut = NewFactory(true)
				if err := tc.Run(f, s, false, p); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(out.String()+errOut.String(), "more exist") {
					t.Errorf("%+v: footer on the last page:\n%s", p, out)
				}
			}
		})
	}
}

// CheckReverse: lists that can be read newest first (occurrences and dlq
// list) ask schedd for newest first; a token of one order is refused in
// the other as invalid input.
func CheckReverse(t *testing.T, cases []PagedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := NewStub()
			s.PageSize = 2
			tc.Seed(s, 5)
			f, out, _ := NewFactory(false)
			if err := tc.Run(f, s, true, cmdutil.PageFlags{Reverse: true, All: true}); err != nil {
				t.Fatal(err)
			}
			if got, _ := ids(t, out.Bytes(), tc.List, tc.IDKey); strings.Join(got, ",") != "occ_04,occ_03,occ_02,occ_01,occ_00" {
				t.Errorf("newest first: %v", got)
			}
			if !s.LastList.Reverse && !s.LastDLQ.Reverse {
				t.Error("order=desc not asked for")
			}
			f, _, _ = NewFactory(false)
			err := tc.Run(f, s, true, cmdutil.PageFlags{Reverse: true, Page: "asc:2"})
			WantErr(t, err, "page: not a token of this list in this order", cmdutil.ExitInvalid)
		})
	}
}
