package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// View draws the frame on the alternate screen, so the terminal's own
// screen comes back as it was when top ends. It only reads the model;
// everything it shows was fetched by commands before.
func (m Model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen = true
	return v
}

// frame is the dashboard's text: a header with the views, a status line
// (the banner when the daemon does not answer), the view's body and a
// footer with the keys, exactly the terminal's height and no wider than
// it. Its styles carry full colours; the program lowers them to the
// terminal's colour profile as it writes.
func (m Model) frame() string {
	w, h := m.size()
	bh := max(0, h-3)
	var body []string
	switch {
	case m.showHelp:
		body = m.helpBody(w)
	case m.view == viewOverview:
		body = m.overviewBody(w, bh)
	case m.view == viewSchedules:
		body = m.schedulesBody(w)
	case m.view == viewDLQ:
		body = m.dlqBody(w)
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.headerLine(w), m.statusLine(w))
	lines = append(lines, fit(body, bh)...)
	lines = append(lines, m.footer(w))
	return finish(lines, w, h)
}

// fit makes lines exactly n long: cut, or padded with empty lines so the
// footer stays at the bottom.
func fit(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// finish cuts every line to the width (escape codes kept whole), drops
// trailing blanks (the renderer clears the rest of a line) and joins the
// first h lines.
func finish(lines []string, w, h int) string {
	if len(lines) > h {
		lines = lines[:h]
	}
	cut := lipgloss.NewStyle().MaxWidth(w)
	for i, l := range lines {
		l, _, _ = strings.Cut(l, "\n") // a section's line is one line
		if lipgloss.Width(l) > w {
			l = cut.Render(l)
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// headerLine is the title, the views (the current one in brackets, so it
// reads without colour too) and, on the right, the node, the store, the
// shards and the time.
func (m *Model) headerLine(w int) string {
	st := m.st
	left := st.title.Render("sched top") + " "
	for v := range numViews {
		name := m.tabName(v)
		if v == m.view {
			left += " " + st.tabActive.Render("["+name+"]")
		} else {
			left += " " + st.tab.Render(" "+name+" ")
		}
	}
	clock := m.clock(m.now)
	var variants []string
	if s := m.status; s != nil {
		shards := fmt.Sprintf("shards %d/%d", s.ShardsOwned, s.Shards)
		variants = []string{
			strings.Join([]string{clean(s.NodeID), s.Store, shards, clock}, " · "),
			strings.Join([]string{clean(s.NodeID), shards, clock}, " · "),
			strings.Join([]string{shards, clock}, " · "),
		}
	}
	variants = append(variants, clock)
	for _, right := range variants {
		gap := w - lipgloss.Width(left) - lipgloss.Width(right)
		if gap >= 2 {
			return left + strings.Repeat(" ", gap) + st.dim.Render(right)
		}
	}
	return left
}

// statusLine is, in order of precedence: the banner while the daemon does
// not answer, a notice (a replay's outcome), the banner of a simulated
// outage, a failing request of the view, or when the figures were read.
func (m *Model) statusLine(w int) string {
	st := m.st
	if d := m.down; d != nil {
		// The longest telling that fits: since when, retrying, the age
		// of the figures shown, and why.
		lead := " daemon unreachable since " + m.clock(d.since) + ", retrying"
		var data, why string
		if !m.statusAt.IsZero() {
			data = " · showing data from " + m.clock(m.statusAt)
		}
		if d.err != nil {
			why = " · " + errText(d.err)
		}
		text := lead
		for _, t := range []string{lead + data + why, lead + why, lead + data} {
			if lipgloss.Width(t) < w {
				text = t
				break
			}
		}
		return st.banner.Render(padRight(text, w))
	}
	if m.note.text != "" && m.now.Before(m.note.until) {
		if m.note.bad {
			return st.bad.Render(clean(m.note.text))
		}
		return st.notice.Render(clean(m.note.text))
	}
	if text := m.outageBanner(); text != "" {
		return st.banner.Render(padRight(text, w))
	}
	for k := range numKinds {
		if err := m.polls[k].err; err != nil && m.wants(k) {
			return st.warn.Render(errText(err) + " (retrying)")
		}
	}
	if m.status == nil {
		return st.dim.Render("asking the daemon…")
	}
	s := m.status
	parts := []string{"updated " + m.clock(m.statusAt), "every " + m.opt.Interval.String()}
	if !s.StatsAt.IsZero() {
		parts = append(parts, "stats at "+m.clock(s.StatsAt))
	}
	parts = append(parts, "schedd "+clean(s.Version), "tzdata "+clean(s.TZVersion))
	return st.dim.Render(strings.Join(parts, " · "))
}

// footer asks for the replay's confirmation, shows the filter being typed,
// or lists the keys of the view.
func (m *Model) footer(w int) string {
	st := m.st
	switch {
	case m.confirm != nil:
		o := m.confirm
		return st.prompt.Render(fmt.Sprintf("replay %s (%s, %s)? y/n", o.OccurrenceID, clean(m.scheduleName(o.ScheduleID)), reasonShort(o.DeadReason)))
	case m.filtering:
		return st.prompt.Render("filter: ") + st.input.Render(clean(m.filter)+"_") + st.dim.Render("  enter keeps it · esc clears it")
	}
	hm := m.help
	hm.SetWidth(w)
	return hm.ShortHelpView(m.keys.forView(m.view).ShortHelp())
}

// helpBody is `?`: every key, by column, and what the figures mean.
func (m *Model) helpBody(w int) []string {
	st := m.st
	hm := m.help
	hm.SetWidth(w)
	k := m.keys
	k.ForceQuit.SetEnabled(false)
	lines := []string{st.heading.Render("KEYS") + st.dim.Render("  (? or esc closes this)"), ""}
	groups := k.FullHelp()
	if w < 100 { // two rows of two columns
		lines = append(lines, strings.Split(hm.FullHelpView(groups[:2]), "\n")...)
		lines = append(lines, strings.Split(hm.FullHelpView(groups[2:]), "\n")...)
	} else {
		lines = append(lines, strings.Split(hm.FullHelpView(groups), "\n")...)
	}
	lines = append(lines, "", st.heading.Render("FIGURES"))
	legend := [][2]string{
		{"schedule lag", "enqueued − scheduled time; enqueued ahead of time counts as 0 (RECENT shows it negative)"},
		{"delivery lag", "first claim by a worker − scheduled time"},
		{"LAG column", "newest delivery lag of the schedule; + still waiting, so far"},
		{"FAIL column", "recent occurrences that died or took more than one attempt"},
		{"DUE", "firings due in each of the next 60 minutes, a column a minute"},
		{"queues", "ready: may run now · later: enqueued ahead · retry: backing off"},
	}
	for _, l := range legend {
		head := st.label.Render(padRight(l[0], 14))
		for i, part := range wrap(l[1], max(20, w-15)) {
			if i > 0 {
				head = strings.Repeat(" ", 14)
			}
			lines = append(lines, head+" "+part)
		}
	}
	return lines
}

// lagStyle colours a lag: fine under a second, a warning under ten, bad
// beyond. Early (negative) is fine.
func (m *Model) lagStyle(d time.Duration) lipgloss.Style {
	switch {
	case d >= 10*time.Second:
		return m.st.bad
	case d >= time.Second:
		return m.st.warn
	}
	return m.st.good
}

// styledDur is an API duration, coloured by lagStyle.
func (m *Model) styledDur(s *string, w int) string {
	d, ok := parseDur(s)
	if !ok {
		return padLeft("-", w)
	}
	return m.lagStyle(d).Render(padLeft(fmtDur(d), w))
}

// scheduleName is a schedule's name when the list has it, else its id.
func (m *Model) scheduleName(id string) string {
	if n, ok := m.names[id]; ok {
		return n
	}
	return id
}

// tabName is the label of view v in the header.
func (m *Model) tabName(v view) string {
	if v == viewDLQ && m.status != nil {
		return fmt.Sprintf("DLQ %d", m.status.DLQSize)
	}
	return v.String()
}

// outageBanner says that a simulated outage (schedctl simulate outage)
// is in progress and when it ends, by the daemon's clock; empty when none
// is, or when the last status's outage has ended since.
func (m *Model) outageBanner() string {
	if m.status == nil || m.status.Outage == nil || !m.status.Outage.Active {
		return ""
	}
	o := m.status.Outage
	left := o.EndsAt.Sub(m.daemonNow())
	if left <= 0 {
		return ""
	}
	text := fmt.Sprintf(" SIMULATED OUTAGE until %s (%ds left)", m.clock(o.EndsAt), int(left.Round(time.Second).Seconds()))
	if len(o.Shards) > 0 {
		shards := make([]string, len(o.Shards))
		for i, s := range o.Shards {
			shards[i] = fmt.Sprint(s)
		}
		text += " · shards " + strings.Join(shards, ",")
	}
	return text + " · planning and claims paused"
}
