package cmdutil

import (
	"io"
	"time"

	"github.com/sched-dev/sched/internal/output"
)

// The output rules live in internal/output, which schedd's own commands
// print through too; these are their names in schedctl's commands.

// Table is a table of a command's output (output.Table).
type Table = output.Table

// NewTable starts a table on f's output with header (output.NewTable).
func NewTable(f *Factory, header ...string) *Table { return output.NewTable(f.Stream(), header...) }

// Stream is f's standard output as the output package prints to it.
func (f *Factory) Stream() output.Stream {
	return output.Stream{Out: f.Out, TTY: f.IsTTY, NoHeaders: f.NoHeaders}
}

// WriteJSON prints v as indented JSON: the stable output of -o json.
func WriteJSON(w io.Writer, v any) error { return output.WriteJSON(w, v) }

// Cell makes text safe for one table cell (output.Cell).
func Cell(s string) string { return output.Cell(s) }

// TS formats an instant for a table (output.TS).
func TS(t *time.Time) string { return output.TS(t) }

// TSV is TS for a time that is always set.
func TSV(t time.Time) string { return output.TSV(t) }

// CompactJSON prints a payload on one line (output.CompactJSON).
func CompactJSON(b []byte) string { return output.CompactJSON(b) }

// Plural counts n of a thing (output.Plural).
func Plural(n int, one, many string) string { return output.Plural(n, one, many) }

// Short rounds a duration for a table cell (output.Short).
func Short(d time.Duration) string { return output.Short(d) }

// ShortDur is Short for a Go duration string of the API (output.ShortDur).
func ShortDur(s *string) string { return output.ShortDur(s) }

// Truncate shortens s to its first line and at most n runes (output.Truncate).
func Truncate(s string, n int) string { return output.Truncate(s, n) }
