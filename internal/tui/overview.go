package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/sched-dev/sched/api"
)

// overviewBody is the Overview: lag, the vital figures, the next hour's
// firings, queue depths and nodes, fitted to bh lines of width w.
func (m *Model) overviewBody(w, bh int) []string {
	s := m.status
	if s == nil {
		return []string{m.st.dim.Render("no figures yet")}
	}
	lag := m.lagBlock(w)
	vitals := m.vitalsBlock(w)
	queueRows := m.queueRows()
	nodesWant := 1 + max(1, len(s.Nodes))
	queuesWant := 1 + max(1, len(queueRows))
	const queueW = 65
	side := w >= queueW+3+60 // queues and nodes side by side
	lower := nodesWant + queuesWant
	if side {
		lower = max(nodesWant, queuesWant)
	}
	// The chart takes what the other sections leave, 3 to 12 rows; blank
	// lines between sections go first when the terminal is short.
	gaps, barH := 3, 0
	for ; gaps >= 0; gaps-- {
		barH = bh - len(lag) - len(vitals) - 2 - lower - gaps
		if barH >= 3 {
			break
		}
	}
	gaps, barH = max(gaps, 0), min(12, max(2, barH))
	gap := func(n int) []string {
		if gaps >= n {
			return []string{""}
		}
		return nil
	}
	out := append(slices.Clone(lag), gap(3)...)
	out = append(out, vitals...)
	out = append(out, gap(1)...)
	out = append(out, m.dueBlock(w, barH)...)
	out = append(out, gap(2)...)
	rest := bh - len(out)
	if side {
		qs := m.queuesBlock(queueRows, rest)
		ns := m.nodesBlock(w-queueW-3, rest)
		for i := range max(len(qs), len(ns)) {
			l := ""
			if i < len(qs) {
				l = qs[i]
			}
			if i < len(ns) {
				l = padStyled(l, queueW+3) + ns[i]
			}
			out = append(out, l)
		}
		return out
	}
	nodesN := min(nodesWant, max(2, rest-3))
	out = append(out, m.queuesBlock(queueRows, rest-nodesN)...)
	out = append(out, m.nodesBlock(w, nodesN)...)
	return out
}

// padStyled pads a styled line to w cells.
func padStyled(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-lipgloss.Width(s)))
}

// notShown stands for the figures a tenant's status leaves out (null in
// its JSON): counted per node across every tenant, they are not the
// tenant's.
const notShown = "— not shown to a tenant (counted across every tenant)"

// lagBlock is the schedule and delivery lag percentiles of the last
// minute and hour, with the trend of the last minute's p99 on the right.
func (m *Model) lagBlock(w int) []string {
	st, s := m.st, m.status
	const lead = 9 + 3*8 + 1 + 3*8 + 2 // label, two groups of three, gaps
	sparkW := w - lead
	head := padRight("LAG", 9)
	for _, h := range []string{"1m p50", "p95", "p99"} {
		head += " " + padLeft(h, 7)
	}
	head += " "
	for _, h := range []string{"1h p50", "p95", "p99"} {
		head += " " + padLeft(h, 7)
	}
	sched, deliv, ok1, ok2 := m.trend()
	if sparkW >= 8 {
		head += "  " + m.trendCaption(sparkW)
	}
	lines := []string{st.heading.Render(head)}
	for _, r := range []struct {
		name string
		lw   *api.LagWindows
		vals []float64
		ok   []bool
	}{
		{"schedule", s.ScheduleLag, sched, ok1},
		{"delivery", s.DeliveryLag, deliv, ok2},
	} {
		l := st.label.Render(padRight(r.name, 9))
		if r.lw == nil {
			// A tenant's status has no lags: they are counted across
			// every tenant.
			l += " " + st.dim.Render(trunc(notShown, max(w-10, 1)))
			lines = append(lines, l)
			continue
		}
		for _, p := range []*string{r.lw.LastMinute.P50, r.lw.LastMinute.P95, r.lw.LastMinute.P99} {
			l += " " + m.styledDur(p, 7)
		}
		l += " "
		for _, p := range []*string{r.lw.LastHour.P50, r.lw.LastHour.P95, r.lw.LastHour.P99} {
			l += " " + m.styledDur(p, 7)
		}
		if sparkW >= 8 {
			l += "  " + st.spark.Render(sparkline(r.vals, r.ok, sparkW))
		}
		lines = append(lines, l)
	}
	return lines
}

// trend is the kept p99 samples, oldest first.
func (m *Model) trend() (sched, deliv []float64, schedOK, delivOK []bool) {
	for _, h := range m.history {
		sched, deliv = append(sched, h.sched), append(deliv, h.deliv)
		schedOK, delivOK = append(schedOK, h.schedOK), append(delivOK, h.delivOK)
	}
	return
}

// trendCaption says what the sparkline spans: the time between the oldest
// and the newest sample it draws.
func (m *Model) trendCaption(w int) string {
	h := m.history
	if len(h) > w {
		h = h[len(h)-w:]
	}
	if len(h) < 2 {
		return trunc("p99 trend", w)
	}
	span := h[len(h)-1].at.Sub(h[0].at).Round(time.Second)
	return trunc("p99, last "+fmtDur(span), w)
}

// vitalsBlock is throughput, the oldest ready occurrence, the DLQ and the
// last hour's counts, flowed over as many lines as the width needs.
func (m *Model) vitalsBlock(w int) []string {
	st, s := m.st, m.status
	var items []string
	if tp := s.Throughput; tp != nil {
		items = append(items, st.label.Render("claims")+" "+fmtRate(tp.ClaimsPerSecond), st.label.Render("acks")+" "+fmtRate(tp.AcksPerSecond))
	} else {
		items = append(items, st.label.Render("claims")+" "+st.dim.Render("—"), st.label.Render("acks")+" "+st.dim.Render("—"))
	}
	if o := s.OldestReady; o != nil {
		age := fmtDurStr(&o.Age)
		if d, ok := parseDur(&o.Age); ok {
			// Ready and untaken for a minute is a warning, ten minutes bad.
			style := m.st.good
			switch {
			case d >= 10*time.Minute:
				style = m.st.bad
			case d >= time.Minute:
				style = m.st.warn
			}
			age = style.Render(fmtDur(d))
		}
		items = append(items, st.label.Render("oldest ready")+" "+age+st.dim.Render(" in ")+clean(o.Queue))
	} else {
		items = append(items, st.label.Render("oldest ready")+" "+st.dim.Render("none waiting"))
	}
	dlq := fmtCount(s.DLQSize)
	if s.DLQSize > 0 {
		dlq = st.warn.Render(dlq)
	}
	items = append(items, st.label.Render("DLQ")+" "+dlq)
	// The last hour's counts stay together, under their label.
	hour := s.LastHour
	if hour == nil {
		items = append(items, st.label.Render("last hour:")+" "+st.dim.Render(notShown))
		return flow(items, st.dim.Render(" · "), w)
	}
	count := func(name string, n int64, bad bool) string {
		v := fmtCount(n)
		if bad && n > 0 {
			v = st.warn.Render(v)
		}
		return name + " " + v
	}
	items = append(items, st.label.Render("last hour:")+" "+strings.Join([]string{
		count("fired", hour.Materialized, false),
		count("MISSED", hour.Missed, true),
		count("SKIPPED", hour.SkippedOverlap, true),
		count("dead", hour.Dead, true),
		count("redelivered", hour.Redeliveries, true),
	}, st.dim.Render(" · ")))
	return flow(items, st.dim.Render(" · "), w)
}

// dueBlock is the firings due in each of the next 60 minutes as a bar a
// minute, with the busiest minute named, so a cliff at a coming hour shows
// before it arrives.
func (m *Model) dueBlock(w, barH int) []string {
	st, s := m.st, m.status
	n := len(s.DueBacklog)
	vals := make([]int64, n)
	var total int64
	peak := 0
	for i, b := range s.DueBacklog {
		vals[i] = b.Due
		total += b.Due
		if b.Due > vals[peak] {
			peak = i
		}
	}
	title := st.heading.Render("DUE next 60m") + "  total " + fmtCount(total)
	if n > 0 && vals[peak] > 0 {
		at := s.DueBacklog[peak].Minute
		when := "this minute"
		if at.After(s.Now) {
			when = fmtUntil(at, s.Now)
		}
		title += st.dim.Render(" · ") + "peak " + st.warn.Render(fmtCount(vals[peak])) + " at " + m.clock(at)[:5] + " (" + when + ")"
	}
	lines := []string{title}
	if n == 0 {
		return append(lines, st.dim.Render("no figures"))
	}
	const gutter = 6
	per := max(1, min(3, (w-gutter)/60))
	wide := make([]int64, 0, n*per)
	for _, v := range vals {
		for range per {
			wide = append(wide, v)
		}
	}
	for i, row := range barChart(wide, barH, 0) {
		label := ""
		if i == 0 {
			label = fmtShort(vals[peak])
		}
		if i == barH-1 {
			label = "0"
		}
		lines = append(lines, st.dim.Render(padLeft(label, gutter-1))+" "+st.bar.Render(row))
	}
	axis := strings.Repeat(" ", gutter)
	for i := 0; i < n; i += 10 {
		lab := m.clock(s.DueBacklog[i].Minute)[:5]
		axis += padRight(lab, 10*per)
	}
	return append(lines, st.dim.Render(strings.TrimRight(axis, " ")))
}

// queueRow is one queue and lane, each occurrence counted once: ready (a
// worker may take it now), later (enqueued ahead of its time), running,
// retry (backing off before its next attempt) and dead.
type queueRow struct {
	tenant, queue, lane                string
	ready, later, running, retry, dead int64
}

func (q queueRow) total() int64 { return q.ready + q.later + q.running + q.retry + q.dead }

// queueRows folds the status's depths by state into one row per queue and
// lane, largest first.
func (m *Model) queueRows() []queueRow {
	idx := map[[3]string]int{}
	var rows []queueRow
	for _, d := range m.status.Queues {
		k := [3]string{d.Tenant, d.Queue, d.Lane}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, queueRow{tenant: d.Tenant, queue: d.Queue, lane: d.Lane})
		}
		r := &rows[i]
		switch d.State {
		case "ENQUEUED":
			r.ready += d.Ready
			r.later += d.Count - d.Ready
		case "RETRY_WAIT":
			r.ready += d.Ready
			r.retry += d.Count - d.Ready
		case "RUNNING":
			r.running += d.Count
		case "DEAD":
			r.dead += d.Count
		}
	}
	slices.SortStableFunc(rows, func(a, b queueRow) int {
		if c := cmp.Compare(b.total(), a.total()); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.queue, b.queue), cmp.Compare(a.lane, b.lane))
	})
	return rows
}

// queuesBlock is the depth table in at most n lines.
func (m *Model) queuesBlock(rows []queueRow, n int) []string {
	st := m.st
	if n <= 0 {
		return nil
	}
	head := padRight("QUEUE", 16) + " " + padRight("LANE", 8)
	for _, h := range []string{"READY", "LATER", "RUNNING", "RETRY", "DEAD"} {
		head += " " + padLeft(h, 7)
	}
	lines := []string{st.heading.Render(head)}
	if len(rows) == 0 {
		return append(lines, st.dim.Render("no open occurrences"))
	}
	show := rows
	if len(rows) > n-1 {
		show = rows[:max(0, n-2)]
	}
	num := func(v int64, s func(...string) string) string {
		t := padLeft(fmtCount(v), 7)
		if v > 0 && s != nil {
			return s(t)
		}
		return t
	}
	for _, r := range show {
		name := r.queue
		if r.tenant != "" && r.tenant != "default" {
			name = r.tenant + "/" + r.queue
		}
		l := padRight(clean(name), 16) + " " + st.dim.Render(padRight(clean(r.lane), 8))
		l += " " + num(r.ready, nil) + " " + num(r.later, nil) + " " + num(r.running, nil)
		l += " " + num(r.retry, m.st.warn.Render) + " " + num(r.dead, m.st.bad.Render)
		lines = append(lines, l)
	}
	if len(show) < len(rows) {
		lines = append(lines, st.dim.Render(fmt.Sprintf("… %d more", len(rows)-len(show))))
	}
	return lines
}

// nodesBlock is the nodes, their shards and their last planner pass, in at
// most n lines of width w: the figures that do not fit are left out whole.
func (m *Model) nodesBlock(w, n int) []string {
	st, s := m.st, m.status
	if n <= 0 {
		return nil
	}
	live := 0
	for _, nd := range s.Nodes {
		if nd.Live {
			live++
		}
	}
	shards := fmt.Sprintf("%d/%d", s.ShardsOwned, s.Shards)
	if s.ShardsOwned < s.Shards {
		shards = st.warn.Render(shards)
	}
	head := st.heading.Render("NODES") + fmt.Sprintf(" %d/%d live", live, len(s.Nodes)) + st.dim.Render(" · ") + "shards " + shards + " owned"
	lines := []string{head}
	nodes := slices.Clone(s.Nodes)
	slices.SortStableFunc(nodes, func(a, b api.StatusNode) int {
		if a.Live != b.Live {
			if a.Live {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.NodeID, b.NodeID)
	})
	show := nodes
	if len(nodes) > n-1 {
		show = nodes[:max(0, n-2)]
	}
	idW := 6
	for _, nd := range show {
		idW = max(idW, min(16, len(nd.NodeID)))
	}
	for _, nd := range show {
		mark := st.good.Render("●")
		if !nd.Live {
			mark = st.bad.Render("○")
		}
		l := mark + " " + padRight(clean(nd.NodeID), idW)
		if !nd.Live {
			l += " " + st.dim.Render("not live, last heartbeat "+m.stamp(&nd.LastHeartbeat))
			lines = append(lines, l)
			continue
		}
		l += " " + padLeft(fmt.Sprint(nd.ShardsOwned), 3) + " shards"
		dot := st.dim.Render(" · ")
		var parts []string
		if p := nd.LastPass; p != nil {
			parts = append(parts, "last pass "+m.clock(p.At), fmtDurStr(&p.Duration), fmtCount(int64(p.Materialized))+" new")
			if p.Missed > 0 {
				parts = append(parts, st.warn.Render(fmt.Sprintf("%d missed", p.Missed)))
			}
			slack := fmtDurStr(&p.HorizonSlack)
			if d, ok := parseDur(&p.HorizonSlack); ok && d <= 0 {
				slack = st.bad.Render(slack)
			}
			parts = append(parts, "slack "+slack)
		} else {
			parts = append(parts, st.dim.Render("no pass yet"))
		}
		if nd.ClockOffset != "" && nd.ClockOffset != "0s" {
			parts = append(parts, "offset "+fmtDurStr(&nd.ClockOffset))
		}
		for _, p := range parts {
			if lipgloss.Width(l)+lipgloss.Width(dot)+lipgloss.Width(p) > w {
				break
			}
			l += dot + p
		}
		lines = append(lines, l)
	}
	if len(show) < len(nodes) {
		lines = append(lines, st.dim.Render(fmt.Sprintf("… %d more", len(nodes)-len(show))))
	}
	return lines
}
