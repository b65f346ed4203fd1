package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sched-dev/sched/api"
)

// reasons says in words why an entry died, by dead_reason.
var reasons = map[string]string{
	"permanent_failure":      "a worker reported a failure that retrying cannot fix",
	"attempts_exhausted":     "every attempt the retry policy allows failed",
	"deadline_passed":        "the next retry would have started after the retry deadline",
	"retry_budget_exhausted": "too many of the tenant's occurrences were waiting to retry",
}

// reasonShort is a dead_reason in a table cell.
func reasonShort(r string) string {
	switch r {
	case "permanent_failure":
		return "permanent"
	case "attempts_exhausted":
		return "attempts used"
	case "deadline_passed":
		return "deadline"
	case "retry_budget_exhausted":
		return "retry budget"
	case "":
		return "-"
	}
	return clean(r)
}

// stateStyle colours an occurrence or schedule state.
func (m *Model) stateStyle(state string) lipgloss.Style {
	switch state {
	case "SUCCEEDED", "ACTIVE":
		return m.st.good
	case "DEAD", "CANCELED":
		return m.st.bad
	case "MISSED", "SKIPPED_OVERLAP", "RETRY_WAIT", "PAUSED":
		return m.st.warn
	}
	return m.st.label.UnsetBold()
}

// refilterDLQ rebuilds the DLQ rows: the entries of the filtered schedule
// (the daemon filters too; this shows the change before its answer),
// newest death first, keeping the selection when it is still shown.
func (m *Model) refilterDLQ() {
	rows := make([]api.Occurrence, 0, len(m.dlq))
	for _, o := range m.dlq {
		if m.dlqFilter == "" || o.ScheduleID == m.dlqFilter {
			rows = append(rows, o)
		}
	}
	slices.SortStableFunc(rows, func(a, b api.Occurrence) int {
		x, y := a.ScheduledFor, b.ScheduledFor
		if a.FinishedAt != nil {
			x = *a.FinishedAt
		}
		if b.FinishedAt != nil {
			y = *b.FinishedAt
		}
		return cmp.Or(y.Compare(x), cmp.Compare(a.OccurrenceID, b.OccurrenceID))
	})
	m.dlqRows = rows
	if m.dlqCursor() < 0 && len(rows) > 0 {
		m.dlqSel = rows[0].OccurrenceID
	}
	m.dlqOff = scroll(m.dlqOff, m.dlqCursor(), m.layoutDLQ().tableRows, len(m.dlqRows))
}

// dlqCursor is the selected entry's row, -1 when it is not shown.
func (m *Model) dlqCursor() int {
	return slices.IndexFunc(m.dlqRows, func(o api.Occurrence) bool { return o.OccurrenceID == m.dlqSel })
}

func (m Model) onDLQKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	lay := m.layoutDLQ()
	if cur, ok := m.listKey(msg, m.dlqCursor(), len(m.dlqRows), lay.tableRows); ok {
		if cur >= 0 && cur < len(m.dlqRows) {
			m.dlqSel = m.dlqRows[cur].OccurrenceID
			m.dlqOff = scroll(m.dlqOff, cur, lay.tableRows, len(m.dlqRows))
		}
		return m, nil
	}
	cur := m.dlqCursor()
	switch {
	case key.Matches(msg, k.Replay):
		if cur < 0 {
			return m, nil
		}
		if m.replaying {
			m.say(m.now, false, "a replay is already on its way")
			return m, nil
		}
		o := m.dlqRows[cur]
		m.confirm = &o
	case key.Matches(msg, k.BySchedule):
		switch {
		case m.dlqFilter != "":
			m.dlqFilter = ""
		case cur >= 0:
			m.dlqFilter = m.dlqRows[cur].ScheduleID
		default:
			return m, nil
		}
		m.refilterDLQ()
		m.invalidate(kindDLQ)
		return m, m.issue(kindDLQ)
	case key.Matches(msg, k.Clear):
		if m.dlqFilter != "" {
			m.dlqFilter = ""
			m.refilterDLQ()
			m.invalidate(kindDLQ)
			return m, m.issue(kindDLQ)
		}
	}
	return m, nil
}

// dlqLayout splits the DLQ body: the table's rows, then the selected
// entry's lines.
type dlqLayout struct{ tableRows, detailLines int }

func (m *Model) layoutDLQ() dlqLayout {
	_, h := m.size()
	bh := max(0, h-3)
	detail := 6
	if bh >= 30 {
		detail = 8
	}
	rows := min(max(2, bh-3-detail), max(1, len(m.dlqRows)))
	return dlqLayout{tableRows: rows, detailLines: max(0, bh-3-rows)}
}

// dlqBody is the DLQ view: a title with the filter, the entries, and the
// selected one in full: why it died and its last error.
func (m *Model) dlqBody(w int) []string {
	st := m.st
	lay := m.layoutDLQ()
	title := st.heading.Render("DEAD LETTERS") + fmt.Sprintf(" %d", len(m.dlqRows))
	if m.moreDLQ {
		title += st.warn.Render(fmt.Sprintf(" (newest %d only)", dlqLimit))
	}
	title += st.dim.Render(" · newest death first")
	if m.dlqFilter != "" {
		title += st.dim.Render(" · ") + "schedule " + st.input.Render(clean(m.scheduleName(m.dlqFilter))) + st.dim.Render(" only (f: all)")
	}
	lines := []string{title}
	if m.dlq == nil && m.polls[kindDLQ].err == nil {
		return append(lines, st.dim.Render("reading the dead-letter queue…"))
	}
	if len(m.dlqRows) == 0 {
		return append(lines, st.good.Render("the dead-letter queue is empty"))
	}
	lines = append(lines, strings.Split(m.dlqTable(w, lay.tableRows), "\n")...)
	lines = fit(lines, 2+lay.tableRows)
	lines = append(lines, "")
	return append(lines, m.dlqDetail(w, lay.detailLines)...)
}

func (m *Model) dlqTable(w, n int) string {
	const fixed = 2 + 12 + 11 + 14 + 4 // marker, died, queue, reason, attempts (each with its gap)
	schW := min(24, max(10, (w-fixed)/3))
	errW := max(8, w-fixed-schW-1) - 1
	cols := []table.Column{
		{Title: "", Width: 1},
		{Title: "DIED▼", Width: 11},
		{Title: "SCHEDULE", Width: schW},
		{Title: "QUEUE", Width: 10},
		{Title: "REASON", Width: 13},
		{Title: "ATT", Width: 3},
		{Title: "LAST ERROR", Width: errW},
	}
	cur := m.dlqCursor()
	off := scroll(m.dlqOff, cur, n, len(m.dlqRows))
	end := min(len(m.dlqRows), off+n)
	rows := make([]table.Row, 0, end-off)
	for i := off; i < end; i++ {
		o := m.dlqRows[i]
		mark := " "
		if i == cur {
			mark = ">"
		}
		rows = append(rows, table.Row{mark, m.stamp(o.FinishedAt), clean(m.scheduleName(o.ScheduleID)), clean(o.Queue),
			reasonShort(o.DeadReason), fmt.Sprint(o.AttemptCount), clean(o.LastError)})
	}
	t := table.New(table.WithColumns(cols), table.WithRows(rows), table.WithHeight(n+1), table.WithWidth(w), table.WithStyles(m.st.table))
	t.SetCursor(cur - off)
	return t.View()
}

// dlqDetail is the selected entry in full, in at most n lines.
func (m *Model) dlqDetail(w, n int) []string {
	st := m.st
	cur := m.dlqCursor()
	if cur < 0 || n <= 0 {
		return nil
	}
	o := m.dlqRows[cur]
	lines := []string{
		st.label.Render(o.OccurrenceID) + st.dim.Render(" · schedule ") + clean(m.scheduleName(o.ScheduleID)) +
			st.dim.Render(" · queue ") + clean(o.Queue) + st.dim.Render(" · lane ") + clean(o.Lane),
		fmt.Sprintf("scheduled %s · died %s after %s", o.ScheduledFor.In(m.opt.Location).Format("2006-01-02 15:04:05 MST"),
			m.stamp(o.FinishedAt), plural(o.AttemptCount, "attempt", "attempts")),
	}
	why := reasons[o.DeadReason]
	switch {
	case o.DeadReason == "":
		why = "no reason recorded"
	case why == "":
		why = clean(o.DeadReason)
	default:
		why += " (" + o.DeadReason + ")"
	}
	lines = append(lines, st.label.Render("why")+" "+why)
	errText := clean(o.LastError)
	if errText == "" {
		errText = st.dim.Render("none recorded")
		lines = append(lines, st.label.Render("last error")+" "+errText)
	} else {
		for i, part := range wrap(errText, max(20, w-11)) {
			head := strings.Repeat(" ", 11)
			if i == 0 {
				head = st.label.Render("last error") + " "
			}
			lines = append(lines, head+st.bad.UnsetBold().Render(part))
		}
	}
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
