// Package report prints a reconcile report (api.ReconcileReport) for
// people and for cut and awk: what schedctl reconcile and schedd
// reconcile both show, in one place. It knows no store: schedctl links
// it.
package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/output"
)

// Write prints a report on s: its verdict line, then as tables a
// summary per schedule and the absent, unexpected, manual and
// unverifiable occurrences. On a terminal the tz warnings come first, as
// sentences, and each list has a title; otherwise every row is
// tab-separated and starts with its kind (schedule, total, absent,
// unexpected, manual, unverifiable, and last tz_warning), each table
// under a header line starting with KIND, for cut and awk. --no-headers
// leaves the rows alone. schedctl reconcile and schedd reconcile both print
// with it.
func Write(s output.Stream, rep *api.ReconcileReport) error {
	w, tty := s.Out, s.TTY
	n := strconv.Itoa
	counts := func(c api.ReconcileCounts) []string {
		return []string{n(c.Succeeded), n(c.Dead), n(c.Canceled), n(c.Missed), n(c.MissedCounted), n(c.SkippedOverlap),
			n(c.Pending), n(c.Absent), n(c.CanceledByChange), n(c.Manual), n(c.Unexpected)}
	}
	if s.Decorated() {
		// The verdict, on a terminal or not: a report mailed from cron
		// says what it found in its first line.
		fmt.Fprintf(w, "Reconciled %s to %s: %s.\n", rep.From.UTC().Format(time.RFC3339), rep.To.UTC().Format(time.RFC3339),
			verdict(rep))
		if tty {
			fmt.Fprintln(w)
		}
	}
	if tty {
		if rep.CompleteFrom != nil {
			fmt.Fprintf(w, "History is complete from %s: retention removed finished occurrences before it, which were not audited.\n\n",
				rep.CompleteFrom.UTC().Format(time.RFC3339))
		}
		for _, x := range rep.TZWarnings {
			fmt.Fprintf(w, "Warning: %s.\n\n", x.Message)
		}
	}
	sums := output.NewTable(s, "SCHEDULE", "NAME", "TENANT", "VERSIONS", "SUCCEEDED", "DEAD", "CANCELED", "MISSED", "COUNTED",
		"SKIPPED", "PENDING", "ABSENT", "BY CHANGE", "MANUAL", "UNEXPECTED").Tag("schedule")
	for _, s := range rep.Schedules {
		sums.Row(append([]string{s.ScheduleID, s.Name, s.TenantID, n(s.Versions)}, counts(s.ReconcileCounts)...)...)
	}
	sums.RowOf("total", append([]string{"total", "", "", ""}, counts(rep.Totals)...)...)
	if err := sums.Print(); err != nil {
		return err
	}
	for _, l := range []struct {
		title string
		rows  []api.ReconcileFinding
	}{{"absent", rep.Absent}, {"unexpected", rep.Unexpected}, {"manual", rep.Manual}, {"unverifiable", rep.Unverifiable}} {
		if len(l.rows) == 0 {
			continue
		}
		if tty {
			fmt.Fprintf(w, "\n%s (%d):\n", l.title, len(l.rows))
		}
		t := output.NewTable(s, "SCHEDULE", "NAME", "VERSION", "SCHEDULED FOR", "OCCURRENCE", "STATE", "REASON").Tag(l.title)
		for _, x := range l.rows {
			t.Row(x.ScheduleID, x.Name, strconv.FormatInt(x.Version, 10), output.TSV(x.ScheduledFor), x.OccurrenceID, x.State, x.Reason)
		}
		if err := t.Print(); err != nil {
			return err
		}
	}
	if tty || len(rep.TZWarnings) == 0 {
		return nil
	}
	// Off a terminal the warnings are lines of their own kind too, last,
	// so the lines of the other kinds keep their places.
	t := output.NewTable(s, "ZONE", "STORE TZ", "TZ", "SHARDS", "SCHEDULES", "UNVERIFIABLE", "MESSAGE").Tag("tz_warning")
	for _, x := range rep.TZWarnings {
		shards := make([]string, len(x.Shards))
		for i, sh := range x.Shards {
			shards[i] = n(sh)
		}
		t.Row(x.Zone, x.StoreTZVersion, x.TZVersion, strings.Join(shards, ","), n(x.Schedules), n(x.Unverifiable), x.Message)
	}
	return t.Print()
}

func verdict(rep *api.ReconcileReport) string {
	unverifiable := ""
	if n := rep.Totals.Unverifiable; n > 0 {
		unverifiable = fmt.Sprintf("; %d unverifiable (the tz rules differ, see the warnings)", n)
	}
	if !rep.Problem {
		if unverifiable != "" {
			return "every firing and occurrence checked is explained" + unverifiable
		}
		return "every firing and occurrence is explained"
	}
	return fmt.Sprintf("%s absent, %s unexpected%s", output.Plural(rep.Totals.Absent, "firing", "firings"),
		output.Plural(rep.Totals.Unexpected, "occurrence", "occurrences"), unverifiable)
}
