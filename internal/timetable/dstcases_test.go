package timetable

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the expected blocks of the golden files in testdata/dst from the engine's output")

// dstCaseDir holds the human-readable DST edge cases; the format is
// described in its README.md.
const dstCaseDir = "../../testdata/dst"

// dstShortSpan is the longest span (seconds) whose reference check runs
// under -short.
const dstShortSpan = 2 * 366 * 86400

// dstSeparator ends a case file's header; the expected output follows it.
const dstSeparator = "----"

// dstCase is one parsed case file.
type dstCase struct {
	path   string
	header string // everything up to and including the separator line, verbatim
	def    Definition
	from   time.Time
	count  int
	want   []string // the expected lines
}

// TestDSTCases runs every golden file in testdata/dst through the engine,
// compares the rendered firings with the file's expected block, and then
// proves the same firings against the brute-force reference.
func TestDSTCases(t *testing.T) {
	entries, err := os.ReadDir(dstCaseDir)
	if err != nil {
		t.Fatalf("reading %s: %v", dstCaseDir, err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		n++
		path := filepath.Join(dstCaseDir, e.Name())
		t.Run(strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), func(t *testing.T) {
			t.Parallel()
			runDSTCase(t, path)
		})
	}
	if n == 0 {
		t.Fatalf("no case files in %s", dstCaseDir)
	}
}

func runDSTCase(t *testing.T, path string) {
	t.Helper()
	c := parseDSTCase(t, path)
	s, err := Parse(c.def)
	if err != nil {
		t.Fatalf("%s: Parse: %v", path, err)
	}
	got, last := renderDSTCase(t, s, c)
	if *update {
		body := strings.Join(got, "\n") + "\n"
		if err := os.WriteFile(path, []byte(c.header+body), 0o644); err != nil {
			t.Fatalf("%s: writing: %v", path, err)
		}
		t.Logf("%s: rewrote the expected block (%d lines); read it before trusting it", path, len(got))
	} else if d := diffLines(c.want, got); d != "" {
		t.Errorf("%s: engine output differs from the expected block (- want, + got):\n%s", path, d)
	}
	// Prove the same firings (and skipped wall times) with the brute-force
	// reference, which walks every minute (every second with a seconds
	// field) of the span. A span of years costs seconds, so -short leaves
	// those few cases to the full run.
	switch {
	case last == 0:
	case testing.Short() && last-c.from.Unix() > dstShortSpan:
		t.Logf("%s: -short: reference check skipped for a span of %d days", path, (last-c.from.Unix())/86400)
	default:
		compareWithReference(t, s, c.from.Unix(), last)
	}
}

// parseDSTCase reads a case file, failing the test with the file and line
// of anything malformed.
func parseDSTCase(t *testing.T, path string) dstCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	c := dstCase{path: path, def: Definition{Kind: KindCron}}
	seen := map[string]bool{}
	var header strings.Builder
	inBody := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		bad := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s:%d: %s (line %q)", path, line, fmt.Sprintf(format, args...), text)
		}
		if inBody {
			if strings.TrimSpace(text) == "" {
				continue
			}
			if strings.HasPrefix(text, "#") {
				bad("comments belong above %q", dstSeparator)
			}
			c.want = append(c.want, strings.TrimRight(text, " \t"))
			continue
		}
		header.WriteString(text + "\n")
		trimmed := strings.TrimSpace(text)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case trimmed == dstSeparator:
			inBody = true
			continue
		}
		key, val, ok := strings.Cut(trimmed, ":")
		if !ok || strings.ContainsAny(key, " \t") {
			bad("want \"key: value\", a # comment or %q", dstSeparator)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if seen[key] {
			bad("key %q given twice", key)
		}
		seen[key] = true
		switch key {
		case "zone":
			c.def.TimeZone = val
		case "cron":
			c.def.Expr = val
		case "from":
			if c.from, err = time.Parse(time.RFC3339, val); err != nil {
				bad("from: not an RFC 3339 instant: %v", err)
			}
		case "count":
			if c.count, err = strconv.Atoi(val); err != nil || c.count < 1 {
				bad("count: want a positive integer")
			}
		case "dst-gap":
			c.def.DSTGap = GapPolicy(val)
		case "dst-repeat":
			c.def.DSTRepeat = RepeatPolicy(val)
		default:
			bad("unknown key %q (want zone, cron, from, count, dst-gap, dst-repeat)", key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !inBody {
		t.Fatalf("%s: no %q line separating the header from the expected output", path, dstSeparator)
	}
	for _, k := range []string{"zone", "cron", "from", "count"} {
		if !seen[k] {
			t.Fatalf("%s: header has no %q", path, k)
		}
	}
	c.header = header.String()
	return c
}

// renderDSTCase runs NextObserved count times from the case's from and
// renders the lines of the expected block. last is the unix time of the last
// firing (0 if there was none).
func renderDSTCase(t *testing.T, s *Timetable, c dstCase) (lines []string, last int64) {
	t.Helper()
	after := c.from
	for i := 0; i < c.count; i++ {
		var skipped []string
		f, ok := s.NextObserved(after, func(w SkippedWall) {
			line := "skipped " + FormatWall(w.Wall)
			if w.Cause == CauseZoneChange {
				line += " " + w.Cause.String()
			}
			skipped = append(skipped, line)
		})
		lines = append(lines, skipped...)
		if !ok {
			lines = append(lines, "none")
			break
		}
		lines = append(lines, renderFiring(s.Location(), f))
		last, after = f.At.Unix(), f.At
	}
	return lines, last
}

// dstLocalLayout is RFC 3339 with the offset always numeric: a local time
// at offset zero reads +00:00, not Z (which would claim it is UTC).
const dstLocalLayout = "2006-01-02T15:04:05-07:00"

// renderFiring is one firing line: UTC instant, local time, abbreviation,
// the note, if any, and zone_change when the note's offset change is not
// daylight saving (a DST note carries no cause: it is the usual case).
func renderFiring(loc *time.Location, f Firing) string {
	local := f.At.In(loc)
	abbr, _ := local.Zone()
	line := f.At.UTC().Format(time.RFC3339) + " " + local.Format(dstLocalLayout) + " " + abbr
	if f.Note != NoteNone {
		line += " " + f.Note.String()
	}
	if f.Cause == CauseZoneChange {
		line += " " + f.Cause.String()
	}
	if f.Merged > 0 {
		line += fmt.Sprintf(" +%d merged", f.Merged)
	}
	return line
}

// diffLines returns a line diff of want and got ("" when equal): common
// lines with two spaces, missing ones with "- ", extra ones with "+ ".
func diffLines(want, got []string) string {
	// Longest common subsequence; the blocks are a few dozen lines.
	m, n := len(want), len(got)
	lcs := make([][]int, m+1)
	for i := range lcs {
		lcs[i] = make([]int, n+1)
	}
	for i := m - 1; i >= 0; i-- {
		for j := n - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	same := true
	i, j := 0, 0
	for i < m || j < n {
		switch {
		case i < m && j < n && want[i] == got[j]:
			b.WriteString("  " + want[i] + "\n")
			i, j = i+1, j+1
		case i < m && (j == n || lcs[i+1][j] >= lcs[i][j+1]):
			b.WriteString("- " + want[i] + "\n")
			i, same = i+1, false
		default:
			b.WriteString("+ " + got[j] + "\n")
			j, same = j+1, false
		}
	}
	if same {
		return ""
	}
	return b.String()
}
