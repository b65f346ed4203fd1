package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

func TestTabSwitchesViews(t *testing.T) {
	hs := newHarness(t, newFixture(1), 80, 24, false)
	want := []view{viewSchedules, viewDLQ, viewOverview, viewSchedules}
	for _, v := range want {
		hs.keys("tab")
		if hs.m.view != v {
			t.Fatalf("after tab the view is %s, want %s", hs.m.view, v)
		}
		hs.mustShow("[" + strings.Split(hs.m.tabName(v), " ")[0])
	}
	hs.keys("shift+tab")
	if hs.m.view != viewOverview {
		t.Fatalf("after shift+tab the view is %s, want Overview", hs.m.view)
	}
	// A view asks for its data when it opens, not at the next tick.
	if calls := hs.src.callsOf("ListDLQ schedule="); len(calls) == 0 {
		t.Errorf("opening the DLQ view did not read the DLQ")
	}
}

func TestHelpToggles(t *testing.T) {
	hs := loaded(t, viewOverview, 80, 24, false)
	hs.keys("?")
	if !hs.m.showHelp {
		t.Fatal("? did not open the help")
	}
	golden(t, "help_80x24", hs.view())
	hs.keys("?")
	if hs.m.showHelp {
		t.Fatal("? again did not close the help")
	}
	hs.mustShow("DUE next 60m")
	hs.keys("?", "esc")
	if hs.m.showHelp {
		t.Fatal("esc did not close the help")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			hs := newHarness(t, newFixture(1), 80, 24, false)
			hs.keys(k)
			if !hs.quit {
				t.Fatalf("%s did not quit", k)
			}
		})
	}
}

// TestSortKeys: s cycles lag, next, failures, name, each in its natural
// direction; S reverses.
func TestSortKeys(t *testing.T) {
	hs := loaded(t, viewSchedules, 120, 40, false)
	steps := []struct {
		keys string
		by   sortKey
		rows string
	}{
		{"", sortLag, "email-digest,nightly-report,billing-sync,hourly-rollup,tenant-sync-eu,cache-warm,quarter-close,weekly-invoice"},
		{"s", sortNext, "email-digest,cache-warm,billing-sync,hourly-rollup,tenant-sync-eu,nightly-report,quarter-close,weekly-invoice"},
		{"s", sortFailures, "tenant-sync-eu,billing-sync,nightly-report,cache-warm,email-digest,hourly-rollup,quarter-close,weekly-invoice"},
		{"s", sortName, "billing-sync,cache-warm,email-digest,hourly-rollup,nightly-report,quarter-close,tenant-sync-eu,weekly-invoice"},
		{"S", sortName, "weekly-invoice,tenant-sync-eu,quarter-close,nightly-report,hourly-rollup,email-digest,cache-warm,billing-sync"},
		{"s", sortLag, "email-digest,nightly-report,billing-sync,hourly-rollup,tenant-sync-eu,cache-warm,quarter-close,weekly-invoice"},
	}
	for _, s := range steps {
		hs.keys(s.keys)
		if hs.m.sortBy != s.by || hs.rowNames() != s.rows {
			t.Fatalf("after %q: sort %s, rows %s; want %s, %s", s.keys, hs.m.sortBy, hs.rowNames(), s.by, s.rows)
		}
		hs.mustShow("sort " + s.by.String())
	}
	// The selection stays on its schedule through the sorts.
	if hs.m.selID != "sch_nightly" {
		t.Errorf("the selection moved to %s", hs.m.selID)
	}
}

// TestFilterByName: / types a filter (q is text then, not quit), enter
// keeps it, esc clears it; the selection and its detail follow.
func TestFilterByName(t *testing.T) {
	hs := loaded(t, viewOverview, 80, 24, false)
	hs.keys("tab", "/", "sync")
	if !hs.m.filtering || hs.rowNames() != "billing-sync,tenant-sync-eu" {
		t.Fatalf("filter %q shows %s", hs.m.filter, hs.rowNames())
	}
	hs.mustShow("filter: sync_", `name contains "sync"`, "SCHEDULES 2 of 8")
	hs.keys("q")
	if hs.quit || hs.rowNames() != "" {
		t.Fatalf("q while typing a filter: quit %v, rows %q", hs.quit, hs.rowNames())
	}
	hs.mustShow("no schedule matches")
	hs.keys("backspace", "backspace", "backspace", "backspace", "backspace", "night", "enter")
	if hs.m.filtering || hs.rowNames() != "nightly-report" {
		t.Fatalf("after enter: typing %v, rows %s", hs.m.filtering, hs.rowNames())
	}
	if hs.m.selID != "sch_nightly" || hs.m.detail == nil || hs.m.detail.ref != "sch_nightly" {
		t.Fatalf("the filtered schedule is not selected with its detail: %q", hs.m.selID)
	}
	hs.mustShow("does not exist (DST gap)")
	hs.keys("esc")
	if hs.m.filter != "" || len(hs.m.rows) != 8 {
		t.Fatalf("esc left filter %q, %d rows", hs.m.filter, len(hs.m.rows))
	}
}

// TestFilterTyping: the filter takes a space and capitals as typed, a
// paste as text (without its line end), and ctrl+u empties it; a paste
// while no filter is typed does nothing, a pasted q does not quit.
func TestFilterTyping(t *testing.T) {
	hs := loaded(t, viewSchedules, 80, 24, false)
	hs.send(tea.PasteMsg{Content: "q"})
	if hs.quit || hs.m.filter != "" {
		t.Fatalf("a paste outside the filter: quit %v, filter %q", hs.quit, hs.m.filter)
	}
	hs.keys("/", "Night ly")
	if hs.m.filter != "Night ly" {
		t.Fatalf("typed filter %q", hs.m.filter)
	}
	hs.keys("ctrl+u")
	if hs.m.filter != "" || len(hs.m.rows) != 8 {
		t.Fatalf("ctrl+u left filter %q, %d rows", hs.m.filter, len(hs.m.rows))
	}
	hs.send(tea.PasteMsg{Content: "SYNC\n"})
	if hs.m.filter != "SYNC" || hs.rowNames() != "billing-sync,tenant-sync-eu" {
		t.Fatalf("pasted filter %q shows %s", hs.m.filter, hs.rowNames())
	}
	hs.mustShow("filter: SYNC_")
}

// TestDLQReplay goes through the model to the Source's Replay: r asks, n
// cancels without a call, r and y replay the selected entry, which leaves
// the list.
func TestDLQReplay(t *testing.T) {
	hs := loaded(t, viewDLQ, 80, 24, false)
	hs.keys("j")
	if hs.m.dlqSel != "occ_01JQ4BKD2S" {
		t.Fatalf("j selected %s", hs.m.dlqSel)
	}
	hs.keys("r")
	hs.mustShow("replay occ_01JQ4BKD2S (billing-sync, permanent)? y/n")
	golden(t, "dlq_confirm_80x24", hs.view())
	hs.keys("n")
	hs.mustShow("replay canceled")
	if got := hs.src.callsOf("Replay"); len(got) != 0 {
		t.Fatalf("n replayed: %v", got)
	}
	// While the question is open, other keys do nothing.
	hs.keys("r", "tab", "q", "j")
	if hs.m.view != viewDLQ || hs.quit || hs.m.dlqSel != "occ_01JQ4BKD2S" {
		t.Fatalf("keys acted while a replay waited for its answer")
	}
	before := len(hs.src.callsOf("ListDLQ"))
	hs.keys("y")
	if got := hs.src.callsOf("Replay"); !slices.Equal(got, []string{"Replay occ_01JQ4BKD2S"}) {
		t.Fatalf("y replayed %v", got)
	}
	hs.mustShow("replayed occ_01JQ4BKD2S: ENQUEUED on queue billing", "DEAD LETTERS 5")
	hs.mustNotShow("invoice 88213")
	if len(hs.src.callsOf("ListDLQ")) == before {
		t.Errorf("the DLQ was not read again after the replay")
	}
	// The notice goes after a few seconds.
	hs.clock.Add(noticeFor + time.Second)
	hs.ticks(1)
	hs.mustNotShow("replayed occ_01JQ4BKD2S")
}

func TestDLQReplayRefused(t *testing.T) {
	hs := loaded(t, viewDLQ, 80, 24, false)
	hs.src.dead = hs.src.dead[1:] // someone else replayed the first entry meanwhile
	hs.keys("r", "y")
	hs.mustShow("replay occ_01JQ4DZ9X1 failed: ")
	hs.mustShow("is not dead")
}

// TestDLQFilterBySchedule: f shows only the selected entry's schedule
// (and asks the daemon for only those); f again shows all.
func TestDLQFilterBySchedule(t *testing.T) {
	hs := loaded(t, viewDLQ, 80, 24, false)
	hs.keys("j", "f")
	if hs.m.dlqFilter != "sch_billing" || len(hs.m.dlqRows) != 2 {
		t.Fatalf("f: filter %q, %d rows", hs.m.dlqFilter, len(hs.m.dlqRows))
	}
	if calls := hs.src.callsOf("ListDLQ schedule=sch_billing"); len(calls) != 1 {
		t.Fatalf("the daemon was asked %v", calls)
	}
	hs.mustShow("schedule billing-sync only", "DEAD LETTERS 2")
	hs.mustNotShow("cache-warm")
	hs.keys("f")
	if hs.m.dlqFilter != "" || len(hs.m.dlqRows) != 6 {
		t.Fatalf("f again: filter %q, %d rows", hs.m.dlqFilter, len(hs.m.dlqRows))
	}
	hs.keys("f", "esc")
	if hs.m.dlqFilter != "" {
		t.Fatalf("esc left filter %q", hs.m.dlqFilter)
	}
}

// TestDaemonGoesAway: when the daemon stops answering the dashboard keeps
// its figures and says since when; when it answers again the banner goes.
func TestDaemonGoesAway(t *testing.T) {
	hs := loaded(t, viewOverview, 80, 24, false)
	hs.keys("tab", "shift+tab") // the schedules are read once
	before := hs.view()
	hs.src.setFail(errRefused)
	hs.clock.Add(3 * time.Second)
	hs.ticks(1)
	hs.mustShow("daemon unreachable since 09:58:15, retrying · connect: connection refused")
	// The figures are the last ones.
	for _, keep := range []string{"schedule      1ms     4ms   240ms", "DUE next 60m", "emails           flexible     288", "node-b"} {
		if !strings.Contains(before, keep) {
			t.Fatalf("bad test: the frame before has no %q", keep)
		}
		hs.mustShow(keep)
	}
	hs.clock.Add(4 * time.Second)
	hs.ticks(1)
	hs.mustShow("daemon unreachable since 09:58:15") // since the first failure
	golden(t, "overview_down_80x24", hs.view())
	hs.send(windowSize(120, 40))
	hs.mustShow("daemon unreachable since 09:58:15, retrying · showing data from 09:58:12 · connect: connection refused")
	hs.send(windowSize(80, 24))
	// Other views keep their data too.
	hs.keys("tab")
	hs.mustShow("daemon unreachable since 09:58:15", "nightly-report")
	hs.keys("shift+tab")

	hs.src.setFail(nil)
	hs.clock.Add(time.Second)
	hs.ticks(1)
	hs.mustNotShow("unreachable")
	hs.mustShow("updated 09:58:20")
}

// TestOneRequestOfEachKind: a tick while a request is in flight starts no
// second one of its kind.
func TestOneRequestOfEachKind(t *testing.T) {
	hs := loaded(t, viewSchedules, 80, 24, false)
	status := len(hs.src.callsOf("Status"))
	lists := len(hs.src.callsOf("ListSchedules"))
	hs.hold = true
	hs.clock.Add(schedulesEvery) // the list is due again
	hs.ticks(1)
	hs.clock.Add(schedulesEvery) // and due again while the first is unanswered
	hs.ticks(2)
	hs.flush()
	if got := len(hs.src.callsOf("Status")) - status; got != 1 {
		t.Errorf("3 ticks with the first request unanswered sent %d status requests, want 1", got)
	}
	if got := len(hs.src.callsOf("ListSchedules")) - lists; got != 1 {
		t.Errorf("3 ticks with the first request unanswered sent %d list requests, want 1", got)
	}
	// After the answers, the next tick asks again.
	hs.ticks(1)
	if got := len(hs.src.callsOf("Status")) - status; got != 2 {
		t.Errorf("the tick after the answer sent no new request (%d in all)", got)
	}
}

// TestStaleAnswersDropped: an answer to a question no longer asked (the
// selection moved while it ran) or with an old sequence number is not
// shown.
func TestStaleAnswersDropped(t *testing.T) {
	hs := loaded(t, viewSchedules, 120, 40, false)
	hs.keys("home")
	first := hs.m.selID // email-digest
	hs.hold = true
	hs.ticks(1)  // asks for email-digest's detail, among others
	hs.keys("j") // nightly-report selected while that runs
	hs.flush()   // the email-digest answer is dropped; nightly-report's is asked and shown
	if hs.m.detail == nil || hs.m.detail.ref != "sch_nightly" {
		t.Fatalf("the detail shown is for %v", hs.m.detail)
	}
	gets := hs.src.callsOf("GetSchedule")
	if n := len(gets); n < 2 || gets[n-2] != "GetSchedule "+first || gets[n-1] != "GetSchedule sch_nightly" {
		t.Fatalf("detail requests: %v", gets)
	}
	// An answer carrying an old sequence number is dropped.
	old := hs.m.polls[kindStatus].seq - 1
	st := hs.src.statuses[0]
	st.NodeID = "node-stale"
	hs.send(statusMsg{seq: old, st: &st, at: now0})
	hs.mustNotShow("node-stale")
}

func TestNarrowAndWideResize(t *testing.T) {
	hs := loaded(t, viewSchedules, 120, 40, false)
	for _, size := range [][2]int{{80, 24}, {60, 15}, {200, 60}} {
		hs.send(windowSize(size[0], size[1]))
		for _, v := range []view{viewOverview, viewSchedules, viewDLQ} {
			hs.m.view = v
			frame := hs.view()
			if n := strings.Count(frame, "\n") + 1; n != size[1] {
				t.Errorf("%s at %dx%d: %d lines", v, size[0], size[1], n)
			}
		}
	}
}

// activityCalls counts the tenant-wide occurrence listings behind the LAG
// and FAIL columns.
func activityCalls(hs *harness) int {
	hs.t.Helper()
	return len(hs.src.callsOf("ListOccurrences schedule= state=SUCCEEDED")) + len(hs.src.callsOf("ListOccurrences schedule= state=ENQUEUED"))
}

// TestScheduleListEvery15s: on the views that show schedules, the status
// and the view's own cheap request follow every tick, but the schedule
// list and the activity listings are read again only schedulesEvery after
// the last time; the Schedules view says how old its list is.
func TestScheduleListEvery15s(t *testing.T) {
	for _, tc := range []struct {
		view    view
		perTick string // a request of the view's, made every tick
	}{
		{viewSchedules, "GetSchedule sch_nightly"},
		{viewDLQ, "ListDLQ schedule="},
	} {
		t.Run(tc.view.String(), func(t *testing.T) {
			hs := loaded(t, tc.view, 120, 40, false)
			if n := len(hs.src.callsOf("ListSchedules")); n != 1 || activityCalls(hs) != 2 {
				t.Fatalf("bad test: %d list requests and %d activity listings on opening the view", n, activityCalls(hs))
			}
			status, own := len(hs.src.callsOf("Status")), len(hs.src.callsOf(tc.perTick))
			for i := range 14 {
				hs.clock.Add(time.Second)
				hs.ticks(1)
				if n := len(hs.src.callsOf("ListSchedules")); n != 1 || activityCalls(hs) != 2 {
					t.Fatalf("%ds after the first list: %d list requests, %d activity listings; want no new one", i+1, n, activityCalls(hs))
				}
			}
			if got := len(hs.src.callsOf("Status")) - status; got != 14 {
				t.Errorf("14 ticks asked for the status %d times", got)
			}
			if got := len(hs.src.callsOf(tc.perTick)) - own; got != 14 {
				t.Errorf("14 ticks made %d requests %q", got, tc.perTick)
			}
			if tc.view == viewSchedules {
				hs.mustShow("schedules as of 09:58:12")
			}
			hs.clock.Add(time.Second) // 15s after the first list
			hs.ticks(1)
			if n := len(hs.src.callsOf("ListSchedules")); n != 2 || activityCalls(hs) != 4 {
				t.Fatalf("at the 15s mark: %d list requests, %d activity listings; want a new one", n, activityCalls(hs))
			}
			if tc.view == viewSchedules {
				hs.mustShow("schedules as of 09:58:27")
			}
		})
	}
}

// TestScheduleListOnDemand: opening the Schedules view, or sorting or
// filtering it, reads the list at once when it is older than
// schedulesEvery, and not when it is fresher.
func TestScheduleListOnDemand(t *testing.T) {
	hs := loaded(t, viewSchedules, 80, 24, false) // the list is read at 09:58:12
	lists := func() int { return len(hs.src.callsOf("ListSchedules")) }
	hs.keys("shift+tab")
	hs.clock.Add(5 * time.Second)
	hs.ticks(1)
	hs.keys("tab", "s", "S", "/", "night", "esc")
	if n := lists(); n != 1 {
		t.Fatalf("a 5s old list was read again on opening, sorting or filtering: %d requests", n)
	}
	hs.keys("shift+tab")
	hs.clock.Add(schedulesEvery)
	hs.ticks(1) // the Overview does not read the list
	if n := lists(); n != 1 {
		t.Fatalf("the Overview read the list: %d requests", n)
	}
	hs.keys("tab") // no tick: the view asks as it opens
	if n := lists(); n != 2 {
		t.Fatalf("opening the view with a 20s old list made %d requests, want 2 in all", n)
	}
	hs.mustShow("schedules as of 09:58:32")
	for _, k := range []string{"s", "S", "/"} {
		hs.clock.Add(schedulesEvery)
		before := lists()
		hs.keys(k)
		if lists() != before+1 {
			t.Fatalf("%q with a 15s old list did not read it again", k)
		}
	}
	hs.keys("esc")
}

// TestScheduleListAfterOutage: a list read that failed while the daemon
// was away is made again as soon as the daemon answers, not a full
// schedulesEvery later.
func TestScheduleListAfterOutage(t *testing.T) {
	hs := loaded(t, viewSchedules, 80, 24, false)
	hs.src.setFail(errRefused)
	hs.clock.Add(schedulesEvery)
	hs.ticks(1)
	hs.mustShow("daemon unreachable since 09:58:27", "schedules as of 09:58:12", "nightly-report")
	lists := len(hs.src.callsOf("ListSchedules"))
	hs.src.setFail(nil)
	hs.clock.Add(2 * time.Second)
	hs.ticks(1)
	if n := len(hs.src.callsOf("ListSchedules")); n != lists+1 {
		t.Fatalf("the daemon is back: %d list requests, want one more than %d", n, lists)
	}
	hs.mustNotShow("unreachable", "retrying")
	hs.mustShow("schedules as of 09:58:29")
}

// TestNextFiringOfAnOldList: a next firing that came due after the list
// was read shows as due, not late (the old list cannot say whether a
// worker has it); one that was overdue when read stays late.
func TestNextFiringOfAnOldList(t *testing.T) {
	hs := loaded(t, viewSchedules, 120, 40, false)
	hs.src.clock = hs.clock // the daemon's clock moves with the test's
	hs.clock.Add(10 * time.Second)
	hs.ticks(1)
	row := func(name string) string {
		t.Helper()
		for _, l := range strings.Split(hs.view(), "\n") {
			if strings.Contains(l, " "+name+" ") {
				return l
			}
		}
		t.Fatalf("no row %s in\n%s", name, hs.view())
		return ""
	}
	if r := row("cache-warm"); !strings.Contains(r, " due ") || strings.Contains(r, "late") {
		t.Errorf("cache-warm, due 2s ago, after the list was read: %q", r)
	}
	if r := row("email-digest"); !strings.Contains(r, "3m22s late") {
		t.Errorf("email-digest, overdue when the list was read: %q", r)
	}
	if r := row("billing-sync"); !strings.Contains(r, "in 1m38s") {
		t.Errorf("billing-sync, not yet due: %q", r)
	}
}
