package cmdutil

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
)

// MaxLimit is the most a list answers at once.
const MaxLimit = 1000

// CheckLimit checks a --limit value.
func CheckLimit(n int) error {
	if n < 0 || n > MaxLimit {
		return UsageErrorf("--limit %d: must be from 1 to %d", n, MaxLimit)
	}
	return nil
}

// PageFlags are the paging flags of every list that can be long: list,
// occurrences, attempts and dlq list. schedd answers a list a page at a
// time (100 rows unless asked otherwise) with a next_page token; without
// --all these commands show one page and say when more exist.
type PageFlags struct {
	Limit   int    // rows per page; 0 for schedd's default (100)
	All     bool   // follow next_page to the end
	Page    string // start at this token, the one a footer gave
	Reverse bool   // newest first (occurrences and dlq list only)
}

// Register adds --limit, --all and --page, and --reverse when the list can
// be read newest first.
func (p *PageFlags) Register(fl *pflag.FlagSet, what string, reverse bool) {
	fl.IntVar(&p.Limit, "limit", 0, fmt.Sprintf("%s per page, 1 to %d (default: schedd's, 100)", what, MaxLimit))
	fl.BoolVar(&p.All, "all", false, "follow every page to the end, not just the first")
	fl.StringVar(&p.Page, "page", "", "start at this page token (from the footer of the previous page)")
	if reverse {
		fl.BoolVar(&p.Reverse, "reverse", false, "newest scheduled time first (a --page token only works in the order it came from)")
	}
}

// Check checks the flags' values.
func (p *PageFlags) Check() error { return CheckLimit(p.Limit) }

// FetchPages reads one page from p.Page on, or with p.All every page to the
// end. next is the token of the page after those read: "" when there are
// no more, and always with All.
func FetchPages[T any](ctx context.Context, p PageFlags, get func(ctx context.Context, page string) ([]T, string, error)) ([]T, string, error) {
	all := []T{}
	page := p.Page
	seen := map[string]bool{}
	for {
		items, next, err := get(ctx, page)
		if err != nil {
			return nil, "", err
		}
		all = append(all, items...)
		if !p.All || next == "" {
			return all, next, nil
		}
		// A token seen before would loop forever, and an empty page with
		// a token is the end all the same.
		if seen[next] || len(items) == 0 {
			return all, "", nil
		}
		seen[next] = true
		page = next
	}
}

// WriteJSONPage writes a list's rows as one JSON array, the shape scripts
// have always read from these commands (with --all, every row). When more
// rows exist, the footer goes to standard error with the token for
// --page, so standard output stays one JSON value.
func WriteJSONPage[T any](f *Factory, rows []T, one, many, next string) error {
	if err := WriteJSON(f.Out, rows); err != nil {
		return err
	}
	return PrintMore(f, true, one, many, len(rows), next)
}

// PrintMore is the footer of a table when more rows exist: on a terminal
// it follows the table on standard output; otherwise, and after JSON, it
// goes to standard error, so the rows stay clean for cut, awk and jq.
func PrintMore(f *Factory, json bool, one, many string, shown int, next string) error {
	if next == "" {
		return nil
	}
	w := f.Out
	if !f.IsTTY || json {
		w = f.ErrOut
	}
	_, err := fmt.Fprintf(w, "%s shown; more exist. Next page: --page %s (same flags), or --all for every page.\n",
		Plural(shown, one, many), next)
	return err
}
