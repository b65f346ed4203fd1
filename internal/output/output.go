// Package output prints what sched's commands show people and scripts:
// tables (aligned on a terminal, tab-separated elsewhere, with their
// header and summary lines unless the caller asked for the rows alone),
// the cells' safe text, times, durations and counts as tables show them,
// and JSON. schedctl and schedd's own commands (schedd reconcile) print
// through it, so both read alike without schedd importing schedctl.
package output

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// WriteJSON prints v as indented JSON: the stable output of -o json.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Table prints rows: on a terminal, aligned columns under a header;
// otherwise tab-separated rows under a tab-separated header, for cut and
// awk. The header is printed either way unless --no-headers
// (Stream.Decorated) drops it. A table made with no header is a list of
// field/value rows and has none.
//
// A tagged table (Tag) is one of several printed into one stream
// (status, cluster, reconcile): off a terminal each of its rows starts
// with its kind and its header with KIND, so that awk can pick one
// table's rows ($1 == "node") and every line still says what it is.
type Table struct {
	s      Stream
	header []string
	kind   string
	rows   [][]string
	kinds  []string // each row's kind, when it is not the table's (RowOf)
}

// Stream is where a command's output goes and how it is read.
type Stream struct {
	Out io.Writer
	// TTY reports whether Out is a terminal: tables are aligned there.
	TTY bool
	// NoHeaders asks for the rows alone: no header lines, no summary
	// lines (--no-headers).
	NoHeaders bool
}

// Decorated reports whether tables print their header line and the
// summary lines around them: always, on a terminal or not, unless
// NoHeaders asked for the rows alone.
func (s Stream) Decorated() bool { return !s.NoHeaders }

// NewTable starts a table on s with header.
func NewTable(s Stream, header ...string) *Table { return &Table{s: s, header: header} }

// Tag makes t a tagged table of kind (see Table) and returns it.
func (t *Table) Tag(kind string) *Table {
	t.kind = kind
	return t
}

// Row adds a row; each cell is made safe with Cell.
func (t *Table) Row(cells ...string) { t.RowOf("", cells...) }

// RowOf adds a row of another kind than the table's (a total under the
// rows it sums): off a terminal it starts with kind.
func (t *Table) RowOf(kind string, cells ...string) {
	for i, c := range cells {
		cells[i] = Cell(c)
	}
	t.rows = append(t.rows, cells)
	t.kinds = append(t.kinds, kind)
}

// Print writes the table.
func (t *Table) Print() error {
	header := t.header
	if !t.s.Decorated() {
		header = nil
	}
	if !t.s.TTY {
		if t.kind != "" && len(header) > 0 {
			header = append([]string{"KIND"}, header...)
		}
		if len(header) > 0 {
			if _, err := fmt.Fprintln(t.s.Out, strings.Join(header, "\t")); err != nil {
				return err
			}
		}
		for i, r := range t.rows {
			if k := cmp.Or(t.kinds[i], t.kind); k != "" {
				r = append([]string{k}, r...)
			}
			if _, err := fmt.Fprintln(t.s.Out, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(t.s.Out, 0, 4, 2, ' ', 0)
	if len(header) > 0 {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// Cell makes text safe for one table cell: control characters (a tab, a
// newline, an escape sequence from a name someone chose) are quoted.
func Cell(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		q := fmt.Sprintf("%q", s)
		return q[1 : len(q)-1]
	}
	if s == "" {
		return "-"
	}
	return s
}

// TS formats an instant for a table: RFC 3339 in UTC, "-" for none.
func TS(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// TSV is TS for a time that is always set.
func TSV(t time.Time) string { return TS(&t) }

// CompactJSON prints a payload on one line.
func CompactJSON(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

// Plural counts n of a thing: "1 schedule", "2 schedules".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Short rounds a duration for a table cell, to what a person reads at a
// glance: milliseconds under a second, tenths of a second under a minute,
// seconds under an hour, minutes beyond.
func Short(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Second:
		d = d.Round(time.Millisecond)
	case a < time.Minute:
		d = d.Round(100 * time.Millisecond)
	case a < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	s := d.String()
	if a >= time.Hour {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

// ShortDur is Short for a Go duration string of the API; "-" for none, the
// string as is when it is not a duration.
func ShortDur(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	d, err := time.ParseDuration(*s)
	if err != nil {
		return *s
	}
	return Short(d)
}

// Truncate shortens s to its first line and at most n runes, marking a cut
// with "...".
func Truncate(s string, n int) string {
	first, _, cut := strings.Cut(s, "\n")
	r := []rune(first)
	if len(r) > n || (cut && len(r) > n-3) {
		return string(r[:min(len(r), n-3)]) + "..."
	}
	if cut {
		return first + "..."
	}
	return first
}
