package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sched-dev/sched/api"
)

// activity is what a schedule's recent occurrences say about it.
//
// Lag is the delivery lag (first claim − scheduled time) of its most
// recent occurrence that succeeded; but when one of its occurrences is due
// and still waiting for a worker and has waited longer than that, lag is
// how late that one is so far (waiting is then true: it grows until a
// worker takes it). So a queue nobody serves shows at once, rather than
// the last good figure.
//
// Failures counts its recent occurrences that died (in the dead-letter
// queue) or that succeeded only after more than one attempt.
//
// "Recent" is what one poll reads: the newest activityLimit succeeded
// occurrences, the oldest activityLimit waiting ones and the newest
// activityLimit dead ones across all schedules, so the cost of a poll does
// not grow with the number of schedules.
type activity struct {
	lag      time.Duration
	hasLag   bool
	waiting  bool
	failures int
}

// computeActivity folds the recent occurrences by schedule: done are
// SUCCEEDED ones newest first, waiting ENQUEUED ones (any order), dead the
// DLQ's entries.
func computeActivity(done, waiting, dead []api.Occurrence) map[string]activity {
	act := map[string]activity{}
	for _, o := range done {
		a := act[o.ScheduleID]
		if !a.hasLag {
			if d, ok := parseDur(o.DeliveryLag); ok {
				a.lag, a.hasLag = d, true
			}
		}
		if o.AttemptCount > 1 {
			a.failures++
		}
		act[o.ScheduleID] = a
	}
	for _, o := range waiting {
		if !o.Due || o.FirstClaimedAt != nil {
			continue
		}
		wait, ok := parseDur(o.Waiting)
		if !ok {
			continue
		}
		// Waiting counts from available_at; lateness from the scheduled time.
		late := wait + o.AvailableAt.Sub(o.ScheduledFor)
		a := act[o.ScheduleID]
		if !a.hasLag || late > a.lag {
			a.lag, a.hasLag, a.waiting = late, true, true
		}
		act[o.ScheduleID] = a
	}
	for _, o := range dead {
		a := act[o.ScheduleID]
		a.failures++
		act[o.ScheduleID] = a
	}
	return act
}

// sortKey is the order of the schedules table.
type sortKey int

const (
	sortLag sortKey = iota
	sortNext
	sortFailures
	sortName
	numSorts
)

func (k sortKey) String() string { return [...]string{"lag", "next", "failures", "name"}[k] }

// naturalDesc is the direction a sort starts in: worst lag and most
// failures first, soonest firing and names A to Z.
func (k sortKey) naturalDesc() bool { return k == sortLag || k == sortFailures }

// resort rebuilds the table's rows from the list, the filter and the sort,
// keeping the selection on the same schedule when it is still shown.
func (m *Model) resort() {
	f := strings.ToLower(m.filter)
	rows := make([]api.Schedule, 0, len(m.schedules))
	for _, sc := range m.schedules {
		if f == "" || strings.Contains(strings.ToLower(sc.Name), f) {
			rows = append(rows, sc)
		}
	}
	byName := func(a, b api.Schedule) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ScheduleID, b.ScheduleID))
	}
	dir := 1
	if m.sortDesc {
		dir = -1
	}
	slices.SortStableFunc(rows, func(a, b api.Schedule) int {
		var c int
		switch m.sortBy {
		case sortLag:
			x, y := m.activity[a.ScheduleID], m.activity[b.ScheduleID]
			if x.hasLag != y.hasLag { // no figure: last either way
				if x.hasLag {
					return -1
				}
				return 1
			}
			c = cmp.Compare(x.lag, y.lag)
		case sortNext:
			if (a.NextFireAt == nil) != (b.NextFireAt == nil) {
				if a.NextFireAt != nil {
					return -1
				}
				return 1
			}
			if a.NextFireAt != nil {
				c = a.NextFireAt.Compare(*b.NextFireAt)
			}
		case sortFailures:
			c = cmp.Compare(m.activity[a.ScheduleID].failures, m.activity[b.ScheduleID].failures)
		case sortName:
			c = byName(a, b)
		}
		if c != 0 {
			return c * dir
		}
		return byName(a, b)
	})
	m.rows = rows
	if m.schedCursor() < 0 {
		m.selectRow(0)
	}
	m.schedOff = scroll(m.schedOff, m.schedCursor(), m.layoutSchedules().tableRows, len(m.rows))
}

// schedCursor is the selected schedule's row, -1 when it is not shown.
func (m *Model) schedCursor() int {
	return slices.IndexFunc(m.rows, func(sc api.Schedule) bool { return sc.ScheduleID == m.selID })
}

// selectRow selects row i (none when there are no rows). An answer on its
// way for the schedule selected before is dropped; detailCmd asks for the
// new one's.
func (m *Model) selectRow(i int) {
	id := ""
	if i >= 0 && i < len(m.rows) {
		id = m.rows[i].ScheduleID
	}
	if id == m.selID {
		return
	}
	m.selID = id
	m.invalidate(kindDetail)
	m.schedOff = scroll(m.schedOff, i, m.layoutSchedules().tableRows, len(m.rows))
}

// detailCmd asks for the selected schedule's detail now when the one shown
// is another's (or none); the ticks keep it fresh after.
func (m *Model) detailCmd() tea.Cmd {
	if m.detail != nil && m.detail.ref == m.selID {
		return nil
	}
	return m.issue(kindDetail)
}

func (m Model) onSchedulesKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if cur, ok := m.listKey(msg, m.schedCursor(), len(m.rows), m.layoutSchedules().tableRows); ok {
		m.selectRow(cur)
		return m, m.detailCmd()
	}
	switch {
	case key.Matches(msg, k.Sort):
		m.sortBy = (m.sortBy + 1) % numSorts
		m.sortDesc = m.sortBy.naturalDesc()
		m.resort()
	case key.Matches(msg, k.Reverse):
		m.sortDesc = !m.sortDesc
		m.resort()
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.Clear):
		m.filter = ""
		m.resort()
	default:
		return m, m.detailCmd()
	}
	return m, tea.Batch(m.detailCmd(), m.refreshSchedules())
}

// onFilterKey edits the name filter; the table follows every keystroke.
// Any key that types text adds it (a space too); keys with ctrl or alt
// type nothing.
func (m Model) onFilterKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k := msg.String(); {
	case k == "enter":
		m.filtering = false
		return m, nil
	case k == "esc":
		m.filtering, m.filter = false, ""
	case k == "backspace":
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case k == "ctrl+u":
		m.filter = ""
	case msg.Text != "" && !msg.Mod.Contains(tea.ModCtrl) && !msg.Mod.Contains(tea.ModAlt):
		m.filter += msg.Text
	default:
		return m, nil
	}
	m.resort()
	return m, tea.Batch(m.detailCmd(), m.refreshSchedules())
}

// schedLayout splits the Schedules body: the table's rows, then the
// detail pane's lines.
type schedLayout struct{ tableRows, detailLines int }

func (m *Model) layoutSchedules() schedLayout {
	_, h := m.size()
	bh := max(0, h-3)
	rows := min(max(3, (bh-3)/3), max(1, len(m.rows)))
	return schedLayout{tableRows: rows, detailLines: max(0, bh-3-rows)}
}

// schedulesBody is the Schedules view: a title with the sort and the
// filter, the table, and the selected schedule's detail.
func (m *Model) schedulesBody(w int) []string {
	st := m.st
	lay := m.layoutSchedules()
	arrow := "▲"
	if m.sortDesc {
		arrow = "▼"
	}
	title := st.heading.Render("SCHEDULES") + fmt.Sprintf(" %d", len(m.rows))
	if len(m.rows) != len(m.schedules) {
		title += fmt.Sprintf(" of %d", len(m.schedules))
	}
	if m.moreScheds {
		title += st.warn.Render(fmt.Sprintf(" (first %d only)", maxSchedules))
	}
	title += st.dim.Render(" · ") + "sort " + m.sortBy.String() + " " + arrow
	if m.filter != "" || m.filtering {
		title += st.dim.Render(" · ") + "name contains " + st.input.Render(fmt.Sprintf("%q", clean(m.filter)))
	}
	if !m.schedulesAt.IsZero() {
		// The list is read every schedulesEvery, not every tick: say how
		// old it is, on the right when there is room.
		age := "schedules as of " + m.clock(m.schedulesAt)
		if gap := w - lipgloss.Width(title) - len(age); gap >= 2 {
			title += strings.Repeat(" ", gap) + st.dim.Render(age)
		} else {
			title += st.dim.Render(" · as of " + m.clock(m.schedulesAt))
		}
	}
	lines := []string{title}
	switch {
	case m.schedules == nil:
		return append(lines, st.dim.Render("reading schedules…"))
	case len(m.schedules) == 0:
		return append(lines, st.dim.Render("no schedules yet"))
	case len(m.rows) == 0:
		return append(lines, st.dim.Render("no schedule matches (esc clears the filter)"))
	}
	lines = append(lines, strings.Split(m.schedTable(w, lay.tableRows), "\n")...)
	lines = fit(lines, 1+1+lay.tableRows)
	lines = append(lines, "")
	return append(lines, m.schedDetail(w, lay.detailLines)...)
}

// schedTable draws the rows in view with bubbles' table. The selected row
// is reversed and marked with >, which reads without colour too.
func (m *Model) schedTable(w, n int) string {
	const fixed = 2 + 10 + 13 + 12 + 9 + 5 // marker, state, queue, next, lag, fail (each with its gap)
	nameW := min(28, max(10, w-fixed-1))
	cols := []table.Column{
		{Title: "", Width: 1},
		{Title: "NAME", Width: nameW},
		{Title: "STATE", Width: 9},
		{Title: "QUEUE", Width: 12},
		{Title: "NEXT", Width: 11},
		{Title: "LAG", Width: 8},
		{Title: "FAIL", Width: 4},
	}
	if rest := w - fixed - nameW - 1; rest >= 9 {
		cols = append(cols, table.Column{Title: "WHEN", Width: rest - 1})
	}
	arrow := "▲"
	if m.sortDesc {
		arrow = "▼"
	}
	if i := map[sortKey]int{sortLag: 5, sortNext: 4, sortFailures: 6, sortName: 1}[m.sortBy]; i > 0 {
		cols[i].Title += arrow
	}
	cur := m.schedCursor()
	off := scroll(m.schedOff, cur, n, len(m.rows))
	end := min(len(m.rows), off+n)
	now := m.daemonNow()
	rows := make([]table.Row, 0, end-off)
	for i := off; i < end; i++ {
		sc := m.rows[i]
		mark := " "
		if i == cur {
			mark = ">"
		}
		next := "-"
		switch {
		case sc.NextFireAt == nil:
		case sc.NextFireAt.Before(now) && !sc.NextFireAt.Before(m.listNow):
			// It came due after the list was read: whether a worker has
			// it yet, the next read will tell; "late" would be a guess.
			next = "due"
		default:
			next = fmtUntil(*sc.NextFireAt, now)
		}
		lag, fail := "-", "-"
		if m.activity != nil {
			a := m.activity[sc.ScheduleID]
			if a.hasLag {
				lag = fmtDur(a.lag)
				if a.waiting {
					lag += "+"
				}
			}
			fail = fmt.Sprint(a.failures)
		}
		r := table.Row{mark, clean(sc.Name), sc.State, clean(sc.Queue), next, lag, fail}
		if len(cols) > 7 {
			r = append(r, when(sc))
		}
		rows = append(rows, r)
	}
	t := table.New(table.WithColumns(cols), table.WithRows(rows), table.WithHeight(n+1), table.WithWidth(w), table.WithStyles(m.st.table))
	t.SetCursor(cur - off)
	return t.View()
}

// when is a schedule's timing in a few words.
func when(sc api.Schedule) string {
	switch sc.Kind {
	case "every":
		return "every " + human(clean(sc.Expression))
	case "at":
		return "at " + clean(sc.Expression)
	}
	s := clean(sc.Expression)
	if sc.TimeZone != "" && sc.TimeZone != "UTC" {
		s += " " + clean(sc.TimeZone)
	}
	return s
}

// schedDetail is the selected schedule in at most n lines: its settings,
// its next firings (with their DST notes) and its recent occurrences with
// their lag.
func (m *Model) schedDetail(w, n int) []string {
	st := m.st
	cur := m.schedCursor()
	if cur < 0 || n <= 0 {
		return nil
	}
	sc := m.rows[cur]
	var d *detailMsg
	if m.detail != nil && m.detail.ref == sc.ScheduleID {
		d = m.detail
		if d.sc != nil {
			sc = *d.sc
		}
	}
	head := st.label.Render(clean(sc.Name)) + "  " + m.stateStyle(sc.State).Render(sc.State) +
		st.dim.Render(fmt.Sprintf("  v%d · queue ", sc.Version)) + clean(sc.Queue)
	if sc.MissedCount > 0 {
		head += st.dim.Render(" · ") + st.warn.Render(fmt.Sprintf("missed %d", sc.MissedCount))
	}
	head += st.dim.Render(" · " + sc.ScheduleID)
	timing := sc.Kind + " " + clean(sc.Expression)
	if sc.Kind == "every" {
		timing = "every " + human(clean(sc.Expression))
	}
	switch sc.Kind {
	case "cron":
		timing += " in " + clean(sc.TimeZone) + " · DST gap " + sc.DSTGap + ", repeat " + sc.DSTRepeat
	case "every":
		if sc.Anchor != "" {
			timing += " from " + clean(sc.Anchor)
		}
	}
	policy := fmt.Sprintf("misfire %s within %s · overlap %s", sc.MisfirePolicy, human(sc.MaxLateness), sc.OverlapPolicy)
	if sc.FlexibleWindow != "" && sc.FlexibleWindow != "0s" {
		policy += " · window " + human(sc.FlexibleWindow)
	}
	policy += fmt.Sprintf(" · %d attempts, backoff %s..%s", sc.MaxAttempts, human(sc.RetryBase), human(sc.RetryCap))
	if sc.RetryDeadline != "" && sc.RetryDeadline != "0s" {
		policy += ", give up after " + human(sc.RetryDeadline)
	}
	lines := []string{head, timing}
	lines = append(lines, wrap(policy, w)...)

	next := []string{st.heading.Render("NEXT FIRINGS")}
	recent := []string{}
	now := m.daemonNow()
	switch {
	case d == nil && m.polls[kindDetail].err != nil:
		next = append(next, st.warn.Render(errText(m.polls[kindDetail].err)))
	case d == nil:
		next = append(next, st.dim.Render("reading…"))
	default:
		if len(sc.Preview) == 0 {
			next = append(next, st.dim.Render("none: it will not fire again"))
		}
		for _, f := range sc.Preview {
			l := strings.Replace(f.Local, "T", " ", 1)
			if len(l) > 19 {
				l = l[:19] + " " + l[19:]
			}
			l += "  " + st.dim.Render(fmtUntil(f.ScheduledFor, now))
			if f.Note != "" {
				note := st.warn.Render(clean(f.Note))
				if lipgloss.Width(l)+2+lipgloss.Width(note) <= w {
					l += "  " + note
				} else {
					next = append(next, l)
					l = "    " + note
				}
			}
			next = append(next, l)
		}
		recent = m.recentBlock(d.occ, now)
	}
	avail := n - len(lines)
	blank := 1
	if avail < 5 {
		blank = 0
	}
	nextN := min(len(next), max(2, avail/2))
	if len(recent) == 0 {
		nextN = min(len(next), avail-blank)
	}
	lines = append(lines, next[:max(0, min(nextN, avail-blank))]...)
	if blank > 0 && len(recent) > 0 {
		lines = append(lines, "")
	}
	if room := n - len(lines); room > 0 && len(recent) > 0 {
		lines = append(lines, recent[:min(len(recent), room)]...)
	}
	return lines
}

// recentBlock is a schedule's recent occurrences, newest first, with their
// schedule and delivery lag; those not yet due are only counted.
func (m *Model) recentBlock(occ []api.Occurrence, now time.Time) []string {
	st := m.st
	var past []api.Occurrence
	ahead := 0
	for _, o := range occ {
		if o.FirstClaimedAt == nil && !o.Due && o.ScheduledFor.After(now) {
			ahead++
			continue
		}
		past = append(past, o)
	}
	head := st.heading.Render(padRight("RECENT", 15) + padRight("STATE", 17) + padLeft("ATT", 3) + padLeft("SCHED LAG", 10) + padLeft("DELIVERY", 10))
	if ahead > 0 {
		head += st.dim.Render(fmt.Sprintf("  (+%d enqueued ahead)", ahead))
	}
	lines := []string{head}
	if len(past) == 0 {
		return append(lines, st.dim.Render("none yet"))
	}
	for _, o := range past {
		state := o.State
		if o.Manual {
			state += " (manual)"
		}
		l := padRight(o.ScheduledFor.In(m.opt.Location).Format("01-02 15:04:05"), 15) + m.stateStyle(o.State).Render(padRight(state, 17)) + padLeft(fmt.Sprint(o.AttemptCount), 3)
		l += m.styledDur(o.ScheduleLag, 10)
		switch {
		case o.DeliveryLag != nil:
			l += m.styledDur(o.DeliveryLag, 10)
		case o.Waiting != nil:
			l += "  " + m.st.warn.Render("waiting "+fmtDurStr(o.Waiting))
		default:
			l += padLeft("-", 10)
		}
		if o.DeadReason != "" {
			l += "  " + st.dim.Render(reasonShort(o.DeadReason))
		}
		lines = append(lines, l)
	}
	return lines
}
