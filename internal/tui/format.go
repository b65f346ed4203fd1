package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"charm.land/lipgloss/v2"
)

// parseDur reads one of the API's Go duration strings; ok is false for a
// null or unreadable one.
func parseDur(s *string) (time.Duration, bool) {
	if s == nil || *s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(*s)
	if err != nil {
		return 0, false
	}
	return d, true
}

// fmtDur writes a duration in at most 7 cells, with the precision a person
// reads at a glance: 840µs, 41ms, 2.71s, 31.2s, 3m12s, 2h05m, 3d04h.
func fmtDur(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d >= time.Hour:
		d = d.Round(time.Minute)
	case d >= time.Minute:
		d = d.Round(time.Second)
	}
	var s string
	switch {
	case d == 0:
		s = "0s"
	case d < time.Minute && d%time.Second == 0:
		s = fmt.Sprintf("%ds", d/time.Second)
	case d < time.Millisecond:
		s = fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < time.Second:
		s = fmt.Sprintf("%dms", d/time.Millisecond)
	case d < 10*time.Second:
		s = fmt.Sprintf("%.2fs", d.Seconds())
	case d < time.Minute:
		s = fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s = fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	default:
		s = fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	}
	return sign + s
}

// human shortens a Go duration string from the API for reading: 5m0s is
// 5m, 6h0m0s 6h.
func human(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// fmtDurStr is fmtDur of an API duration string, "-" for null.
func fmtDurStr(s *string) string {
	d, ok := parseDur(s)
	if !ok {
		return "-"
	}
	return fmtDur(d)
}

// fmtCount writes a count with thousands separators: 70,311.
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtShort writes a count in at most 5 cells: 950, 1.2k, 34k, 1.5M.
func fmtShort(n int64) string {
	f := float64(n)
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", f/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1fM", f/1e6)
	}
	return fmt.Sprintf("%dM", n/1_000_000)
}

// fmtRate writes a per-second rate: 0/s, 0.4/s, 19.8/s, 1204/s.
func fmtRate(f float64) string {
	switch {
	case f == 0:
		return "0/s"
	case f < 100:
		return fmt.Sprintf("%.1f/s", f)
	}
	return fmt.Sprintf("%.0f/s", f)
}

// fmtUntil writes how far t is from now: "in 42s", "in 3m10s", "4s late".
func fmtUntil(t, now time.Time) string {
	d := t.Sub(now).Round(time.Second)
	if d < 0 {
		return fmtDur(-d) + " late"
	}
	if d == 0 {
		return "now"
	}
	return "in " + fmtDur(d)
}

// clean makes text from the daemon (names, queues, a worker's error) safe to
// draw: control characters, an escape sequence among them, would move the
// cursor or change colours; newlines would break the layout.
func clean(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			if r == '\n' || r == '\t' || r == '\r' {
				return ' '
			}
			return '?'
		}
		return r
	}, s)
}

// trunc cuts plain text to w cells, ending with … when it cut.
func trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		rw := lipgloss.Width(string(r))
		if n+rw > w-1 {
			break
		}
		b.WriteRune(r)
		n += rw
	}
	return b.String() + "…"
}

// padRight pads (or cuts) s to exactly w cells.
func padRight(s string, w int) string {
	s = trunc(s, w)
	return s + strings.Repeat(" ", max(0, w-lipgloss.Width(s)))
}

// padLeft right-aligns s in w cells (cutting it when longer).
func padLeft(s string, w int) string {
	s = trunc(s, w)
	return strings.Repeat(" ", max(0, w-lipgloss.Width(s))) + s
}

// flow lays items out on as few lines of width w as they fit, sep between
// items on a line. Items may carry styles.
func flow(items []string, sep string, w int) []string {
	var lines []string
	cur, curW := "", 0
	sw := lipgloss.Width(sep)
	for _, it := range items {
		iw := lipgloss.Width(it)
		switch {
		case curW == 0:
			cur, curW = it, iw
		case curW+sw+iw <= w:
			cur, curW = cur+sep+it, curW+sw+iw
		default:
			lines = append(lines, cur)
			cur, curW = it, iw
		}
	}
	if curW > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// wrap breaks plain text into lines of at most w cells at spaces, cutting
// a word longer than a line.
func wrap(s string, w int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for lipgloss.Width(word) > w {
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			rs := []rune(word)
			lines = append(lines, string(rs[:w]))
			word = string(rs[w:])
		}
		switch {
		case cur == "":
			cur = word
		case lipgloss.Width(cur)+1+lipgloss.Width(word) <= w:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// blocks are the eighth-height bars used by the sparkline and the chart.
var blocks = []rune(" ▁▂▃▄▅▆▇█")

// sparkline draws vals (oldest first) as one row of eighth blocks scaled
// to their maximum, the newest on the right; a missing value (ok false) is
// a blank and a zero the lowest block, so "no samples" and "no lag" differ.
func sparkline(vals []float64, ok []bool, width int) string {
	if len(vals) > width {
		vals, ok = vals[len(vals)-width:], ok[len(ok)-width:]
	}
	top := 0.0
	for i, v := range vals {
		if ok[i] && v > top {
			top = v
		}
	}
	var b strings.Builder
	for i, v := range vals {
		switch {
		case !ok[i]:
			b.WriteRune(' ')
		case top <= 0 || v <= 0:
			b.WriteRune(blocks[1])
		default:
			lvl := 1 + int(math.Round(v/top*7))
			b.WriteRune(blocks[min(8, max(1, lvl))])
		}
	}
	return b.String()
}

// barChart draws vals as columns height rows tall, scaled to top (the
// largest value when top is 0), and returns the rows top first. A column
// of a non-zero value shows at least one eighth, so a single firing is
// visible next to a cliff.
func barChart(vals []int64, height int, top int64) []string {
	if top <= 0 {
		for _, v := range vals {
			top = max(top, v)
		}
	}
	eighths := make([]int, len(vals))
	for i, v := range vals {
		if v > 0 && top > 0 {
			eighths[i] = max(1, int(math.Round(float64(v)/float64(top)*float64(height*8))))
		}
	}
	rows := make([]string, height)
	for r := range height {
		base := (height - 1 - r) * 8
		var b strings.Builder
		for _, e := range eighths {
			b.WriteRune(blocks[min(8, max(0, e-base))])
		}
		rows[r] = b.String()
	}
	return rows
}
