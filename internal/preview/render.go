package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
)

// WriteJSON writes the result as indented JSON. Instants are RFC 3339:
// scheduled_for in UTC with a Z, local with the zone's offset.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Styles used by the table; the zero Styles renders plain text.
type Styles struct {
	Header, Dim, Note, Skip lipgloss.Style
}

// NewStyles returns the styles for a colour terminal (the caller decides
// whether its output is one: Factory.Styled).
func NewStyles() Styles {
	return Styles{
		Header: lipgloss.NewStyle().Bold(true),
		Dim:    lipgloss.NewStyle().Faint(true),
		Note:   lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		Skip:   lipgloss.NewStyle().Foreground(lipgloss.Color("5")),
	}
}

// PlainStyles renders without any escape codes (NO_COLOR, pipes, files).
func PlainStyles() Styles {
	plain := lipgloss.NewStyle()
	return Styles{Header: plain, Dim: plain, Note: plain, Skip: plain}
}

// TableOptions says how WriteTableWith renders a preview.
type TableOptions struct {
	Styles Styles
	// Relative adds a column with each firing's distance from Now ("in 3
	// h 12 min", "2 d ago"), as systemd-analyze calendar shows. It is for
	// a person at a terminal: output that a script or a golden file
	// captures leaves it out, so it does not change with the day it runs.
	Relative bool
	// Now is the instant the relative column counts from: the reader's
	// now, whatever the preview's From (a preview of last week reads "3 d
	// ago"). Zero counts from From.
	Now time.Time
}

// WriteTable writes the result for people: a heading, then one row per
// firing (local time with abbreviation and offset, UTC, note) and one row
// per skipped wall time, in time order.
func (r *Result) WriteTable(w io.Writer, st Styles) error {
	return r.WriteTableWith(w, TableOptions{Styles: st})
}

// WriteTableWith is WriteTable with options: with Relative, a column
// between UTC and the note says how far each firing is from opt.Now.
func (r *Result) WriteTableWith(w io.Writer, opt TableOptions) error {
	st := opt.Styles
	var b strings.Builder
	head := fmt.Sprintf("%s %s in %s", r.Kind, r.Expression, r.TimeZone)
	if r.Kind == "cron" {
		head += fmt.Sprintf("  (dst-gap %s, dst-repeat %s)", r.DSTGap, r.DSTRepeat)
	}
	if r.Anchor != nil {
		head += "  (anchor " + r.Anchor.Format(time.RFC3339) + ")"
	}
	fmt.Fprintln(&b, st.Header.Render(head))
	fmt.Fprintln(&b, st.Dim.Render(fmt.Sprintf("after %s, tz database %s", r.From.Format(time.RFC3339), r.TZVersion)))
	b.WriteString("\n")

	type row struct{ n, local, utc, rel, note string }
	rows := []row{{"#", "LOCAL", "UTC", "RELATIVE", "NOTE"}}
	skips := skippedBefore(r)
	relativeFrom := opt.Now
	if relativeFrom.IsZero() {
		relativeFrom = r.From
	}
	addSkips := func(before int) {
		for _, e := range skips[before] {
			rows = append(rows, row{"-", strings.Replace(e.Local, "T", " ", 1) + " (skipped)", "-", "-", e.Note})
		}
	}
	for i, f := range r.Firings {
		addSkips(i)
		rows = append(rows, row{
			fmt.Sprint(i + 1),
			localColumn(f),
			f.ScheduledFor.UTC().Format("2006-01-02 15:04:05Z"),
			Relative(f.ScheduledFor.Sub(relativeFrom)),
			f.Note,
		})
	}
	addSkips(len(r.Firings))
	var wn, wl, wu, wr int
	for _, rw := range rows {
		wn, wl, wu, wr = max(wn, len(rw.n)), max(wl, len(rw.local)), max(wu, len(rw.utc)), max(wr, len(rw.rel))
	}
	for i, rw := range rows {
		line := fmt.Sprintf("%*s  %-*s  %-*s", wn, rw.n, wl, rw.local, wu, rw.utc)
		if opt.Relative {
			line += fmt.Sprintf("  %-*s", wr, rw.rel)
		}
		switch {
		case i == 0:
			line = st.Header.Render(line + "  " + rw.note)
		case rw.n == "-":
			line = st.Skip.Render(line + "  " + rw.note)
		case rw.note != "":
			line += "  " + st.Note.Render(rw.note)
		}
		fmt.Fprintln(&b, strings.TrimRight(line, " "))
	}
	if r.End != "" {
		fmt.Fprintln(&b, st.Dim.Render("("+r.End+")"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// skippedBefore groups the gap_skipped events by the index of the firing
// they precede (len(Firings) for those after the last).
func skippedBefore(r *Result) map[int][]Event {
	out := map[int][]Event{}
	for _, e := range r.DSTEvents {
		if e.Event == EventGapSkipped {
			out[e.before] = append(out[e.before], e)
		}
	}
	return out
}

// localColumn shows a firing's local time with weekday, abbreviation and
// offset.
func localColumn(f Firing) string {
	return f.local.Format("Mon 2006-01-02 15:04:05 MST -07:00")
}
