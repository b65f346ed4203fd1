// Package tui is schedctl top: a live dashboard of a sched cluster in the
// terminal, built on bubbletea. It shows how late firings are (schedule and
// delivery lag percentiles with a trend), what is coming in the next hour
// (a bar per minute), queue depths, nodes and shards (Overview); the
// schedules with their lag, next firings and recent occurrences
// (Schedules); and the dead-letter queue with why each entry died, where an
// entry can be replayed (DLQ).
//
// Every request to the daemon runs in a tea.Cmd and comes back as a
// message, so a slow or silent daemon never blocks a keypress or a redraw:
// the dashboard keeps the last figures it had and says since when the
// daemon has not answered.
package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// DefaultInterval is how often the dashboard asks the daemon again.
const DefaultInterval = time.Second

// schedulesEvery is how often, at most, the schedule list and the recent
// activity behind its LAG and FAIL columns are read again, where every
// other request follows the interval. Those reads are the dear ones: the
// list makes the daemon read each schedule's own data, up to maxSchedules
// of them, and the activity is two listings across the whole tenant (the
// newest succeeded occurrences, the waiting ones) that a store answers by
// scanning and sorting all its occurrences: a few hundred milliseconds on a
// large store. Asked every second by every open dashboard, they would keep
// a busy daemon at it, and their answer might come too slowly to ever be
// shown. What they feed changes slowly (a lag, a count of failures), the
// selected schedule's detail still follows every tick, and the view says
// how old its list is.
const schedulesEvery = 15 * time.Second

// Options configures a dashboard. The zero value is usable apart from the
// Source given to New.
type Options struct {
	// Interval between polls; DefaultInterval when 0.
	Interval time.Duration
	// Timeout bounds each request, so a daemon that accepts connections
	// but does not answer shows as unreachable; 5s or three intervals,
	// whichever is longer, when 0.
	Timeout time.Duration
	// Context is the parent of every request; canceling it aborts them.
	Context context.Context
	// Now is the clock (time.Now when nil); tests pin it.
	Now func() time.Time
	// Location is the zone times are shown in; time.Local when nil.
	Location *time.Location

	// manualTick, set by tests, stops the model from scheduling its own
	// ticks: the test sends tickMsg itself and never waits on a timer.
	manualTick bool
}

// view is one screen of the dashboard.
type view int

const (
	viewOverview view = iota
	viewSchedules
	viewDLQ
	numViews
)

func (v view) String() string {
	return [...]string{"Overview", "Schedules", "DLQ"}[v]
}

// kind is one sort of request the dashboard repeats; at most one of each
// is in flight.
type kind int

const (
	kindStatus    kind = iota // GET /v1/status
	kindSchedules             // the schedule list and the activity behind lag and failures, every schedulesEvery
	kindDetail                // the selected schedule with its preview and recent occurrences
	kindDLQ                   // the dead-letter queue
	numKinds
)

// poll tracks one kind of request. seq numbers requests; an answer whose
// seq is not the latest is dropped. dirty is set when what the request asks
// for changed while it ran (another schedule selected, another DLQ filter):
// its answer is dropped and the request made again at once.
type poll struct {
	seq      uint64
	inflight bool
	dirty    bool
	err      error // the last failure of this kind, cleared by a success
}

// Answers of the requests. Each carries the seq it was sent with and the
// time (Options.Now) it came back.
type (
	tickMsg   struct{}
	statusMsg struct {
		seq uint64
		st  *api.Status
		err error
		at  time.Time
	}
	schedulesMsg struct {
		seq  uint64
		list []api.Schedule
		more bool // the list was cut at maxSchedules
		act  map[string]activity
		err  error
		at   time.Time
	}
	detailMsg struct {
		seq uint64
		ref string
		sc  *api.Schedule
		occ []api.Occurrence
		err error
		at  time.Time
	}
	dlqMsg struct {
		seq    uint64
		filter string
		items  []api.Occurrence
		more   bool
		err    error
		at     time.Time
	}
	replayMsg struct {
		id  string
		occ *api.Occurrence
		err error
		at  time.Time
	}
)

// Limits of what one poll reads, so a huge cluster costs the daemon a
// bounded amount per second.
const (
	maxSchedules  = 2000 // schedules listed
	activityLimit = 500  // recent occurrences read for lag and failures
	detailLimit   = 100  // occurrences of the selected schedule, newest first
	dlqLimit      = 500  // dead-letter entries listed
	sparkSamples  = 240  // p99 samples kept for the trends
	noticeFor     = 5 * time.Second
)

// lagSample is one reading of the last minute's p99s, kept to draw the
// trend: one per fresh statistics snapshot (stats_at), not one per poll,
// since the daemon caches them for a few seconds.
type lagSample struct {
	at               time.Time
	sched, deliv     float64 // seconds
	schedOK, delivOK bool
}

// down is the daemon not answering: since when, and the last error.
type down struct {
	since time.Time
	err   error
}

// notice is a message shown on the status line for a few seconds.
type notice struct {
	text  string
	bad   bool
	until time.Time
}

// Model is the dashboard: a bubbletea model. Build it with New.
type Model struct {
	src  Source
	opt  Options
	st   styles
	keys keyMap
	help help.Model

	width, height int
	view          view
	showHelp      bool
	now           time.Time

	polls [numKinds]poll
	down  *down
	note  notice

	status     *api.Status
	statusAt   time.Time // when the status shown arrived
	history    []lagSample
	schedules  []api.Schedule
	names      map[string]string // schedule id -> name
	moreScheds bool
	activity   map[string]activity
	detail     *detailMsg
	dlq        []api.Occurrence
	moreDLQ    bool

	// schedAsked is when the last request of the list was sent (the next
	// waits schedulesEvery from it); schedulesAt when the list shown
	// arrived, and listNow the daemon's clock then.
	schedAsked, schedulesAt, listNow time.Time

	// Schedules view.
	rows      []api.Schedule // schedules after the filter, in the sort order
	selID     string         // the selected schedule's id
	schedOff  int            // the first row shown
	sortBy    sortKey
	sortDesc  bool
	filter    string
	filtering bool // typing the filter

	// DLQ view.
	dlqRows   []api.Occurrence // entries after the schedule filter, newest death first
	dlqSel    string           // the selected entry's occurrence id
	dlqOff    int
	dlqFilter string          // a schedule id, or ""
	confirm   *api.Occurrence // the entry waiting for y/n before a replay
	replaying bool
}

// New returns a dashboard that reads from src.
func New(src Source, opt Options) Model {
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	if opt.Timeout <= 0 {
		opt.Timeout = max(5*time.Second, 3*opt.Interval)
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
	m := Model{
		src:      src,
		opt:      opt,
		st:       newStyles(),
		keys:     newKeyMap(),
		help:     help.New(),
		activity: map[string]activity{},
		sortBy:   sortLag,
		sortDesc: true,
		now:      opt.Now(),
	}
	m.help.Styles = m.st.help
	return m
}

// Init starts the first poll at once; every tick after schedules the next.
func (m Model) Init() tea.Cmd {
	return func() tea.Msg { return tickMsg{} }
}

// Update applies one message: a key, a paste, a new size, a tick or an
// answer.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.scrollIntoView()
		return m, nil
	case tea.KeyPressMsg:
		return m.onKey(msg)
	case tea.PasteMsg:
		// A paste is text for the filter being typed, and nothing else:
		// a pasted "q" must not quit.
		if m.filtering {
			m.filter += clean(strings.TrimRight(msg.Content, "\r\n"))
			m.resort()
			return m, tea.Batch(m.detailCmd(), m.refreshSchedules())
		}
		return m, nil
	case tickMsg:
		m.now = m.opt.Now()
		cmd := m.fetch()
		if !m.opt.manualTick {
			cmd = tea.Batch(cmd, tea.Tick(m.opt.Interval, func(time.Time) tea.Msg { return tickMsg{} }))
		}
		return m, cmd
	case statusMsg:
		if !m.land(kindStatus, msg.seq, msg.err) {
			return m, m.retry(kindStatus)
		}
		m.now = msg.at
		if msg.err != nil {
			if m.down == nil {
				m.down = &down{since: msg.at}
			}
			m.down.err = msg.err
			return m, nil
		}
		back := m.down != nil
		m.down = nil
		m.status, m.statusAt = msg.st, msg.at
		m.record(msg.st)
		if back && m.polls[kindSchedules].err != nil {
			// The list failed while the daemon was away: read it now
			// that it is back rather than schedulesEvery later.
			return m, m.issue(kindSchedules)
		}
		return m, nil
	case schedulesMsg:
		if !m.land(kindSchedules, msg.seq, msg.err) || msg.err != nil {
			return m, m.retry(kindSchedules)
		}
		m.schedules, m.moreScheds, m.activity = msg.list, msg.more, msg.act
		m.schedulesAt, m.listNow = msg.at, m.daemonAt(msg.at)
		m.names = make(map[string]string, len(msg.list))
		for _, sc := range msg.list {
			m.names[sc.ScheduleID] = sc.Name
		}
		m.resort()
		// The first list picks a schedule: fetch its detail now.
		return m, m.detailCmd()
	case detailMsg:
		if !m.land(kindDetail, msg.seq, msg.err) || msg.err != nil {
			return m, m.retry(kindDetail)
		}
		if msg.ref == m.selID {
			d := msg
			m.detail = &d
		}
		return m, nil
	case dlqMsg:
		if !m.land(kindDLQ, msg.seq, msg.err) || msg.err != nil {
			return m, m.retry(kindDLQ)
		}
		m.dlq, m.moreDLQ = msg.items, msg.more
		m.refilterDLQ()
		return m, nil
	case replayMsg:
		m.replaying = false
		if msg.err != nil {
			m.say(msg.at, true, "replay "+msg.id+" failed: "+errText(msg.err))
			return m, nil
		}
		m.say(msg.at, false, "replayed "+msg.id+": "+msg.occ.State+" on queue "+clean(msg.occ.Queue))
		// The entry has left the DLQ; drop it now and read the DLQ again
		// (an answer already on its way predates the replay).
		m.dlq = slices.DeleteFunc(slices.Clone(m.dlq), func(o api.Occurrence) bool { return o.OccurrenceID == msg.id })
		m.refilterDLQ()
		m.invalidate(kindDLQ)
		return m, m.issue(kindDLQ)
	}
	return m, nil
}

// land books an answer of kind k with sequence seq. It reports whether the
// answer is to be used: false for an answer to a superseded request, or to
// one whose question changed while it ran.
func (m *Model) land(k kind, seq uint64, err error) bool {
	p := &m.polls[k]
	if seq != p.seq {
		return false
	}
	p.inflight = false
	if p.dirty {
		p.dirty = false
		return false
	}
	p.err = err
	return true
}

// retry makes a request of kind k again at once if its question changed
// while the last one ran; otherwise the next tick will.
func (m *Model) retry(k kind) tea.Cmd {
	if m.polls[k].inflight || !m.wants(k) {
		return nil
	}
	if m.polls[k].err != nil {
		return nil // a failure waits for the next tick
	}
	return m.issue(k)
}

// invalidate marks the request of kind k in flight, if any, as asking an
// old question: its answer will be dropped.
func (m *Model) invalidate(k kind) {
	if m.polls[k].inflight {
		m.polls[k].dirty = true
	}
}

// wants reports whether the view at hand needs requests of kind k.
func (m *Model) wants(k kind) bool {
	switch k {
	case kindStatus:
		return true
	case kindSchedules:
		// The DLQ view shows schedule names too.
		return m.view != viewOverview
	case kindDetail:
		return m.view == viewSchedules && m.selID != ""
	case kindDLQ:
		return m.view == viewDLQ
	}
	return false
}

// due reports whether a request of kind k is to be made again: always, but
// for the schedule list, which waits schedulesEvery after the last one.
func (m *Model) due(k kind) bool {
	if k != kindSchedules || m.schedAsked.IsZero() {
		return true
	}
	return m.opt.Now().Sub(m.schedAsked) >= schedulesEvery
}

// fetch starts every request the view needs that is due and not already in
// flight.
func (m *Model) fetch() tea.Cmd {
	var cmds []tea.Cmd
	for k := range numKinds {
		if m.wants(k) && m.due(k) {
			cmds = append(cmds, m.issue(k))
		}
	}
	return tea.Batch(cmds...)
}

// refreshSchedules reads the schedule list again when it is older than
// schedulesEvery: for a new sort or filter, which would otherwise rearrange
// old figures.
func (m *Model) refreshSchedules() tea.Cmd {
	if !m.due(kindSchedules) {
		return nil
	}
	return m.issue(kindSchedules)
}

// issue starts a request of kind k unless one is in flight: the command
// captures what to ask now, and its answer carries the new seq.
func (m *Model) issue(k kind) tea.Cmd {
	p := &m.polls[k]
	if p.inflight || !m.wants(k) {
		return nil
	}
	p.seq++
	p.inflight = true
	p.dirty = false
	seq, src, opt := p.seq, m.src, m.opt
	switch k {
	case kindStatus:
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(opt.Context, opt.Timeout)
			defer cancel()
			st, err := src.Status(ctx)
			return statusMsg{seq: seq, st: st, err: wrap1("status", err), at: opt.Now()}
		}
	case kindSchedules:
		m.schedAsked = opt.Now()
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(opt.Context, opt.Timeout)
			defer cancel()
			msg := fetchSchedules(ctx, src)
			msg.seq, msg.at = seq, opt.Now()
			return msg
		}
	case kindDetail:
		ref := m.selID
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(opt.Context, opt.Timeout)
			defer cancel()
			msg := detailMsg{seq: seq, ref: ref}
			msg.sc, msg.err = src.GetSchedule(ctx, ref)
			if msg.err == nil {
				var l *api.OccurrenceList
				l, msg.err = src.ListOccurrences(ctx, client.ListOccurrencesOptions{Schedule: ref, Reverse: true, Limit: detailLimit})
				if l != nil {
					msg.occ = l.Occurrences
				}
			}
			msg.err, msg.at = wrap1("schedule "+ref, msg.err), opt.Now()
			return msg
		}
	case kindDLQ:
		filter := m.dlqFilter
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(opt.Context, opt.Timeout)
			defer cancel()
			msg := dlqMsg{seq: seq, filter: filter}
			l, err := src.ListDLQ(ctx, client.ListDLQOptions{Schedule: filter, Reverse: true, Limit: dlqLimit})
			if err == nil {
				msg.items, msg.more = l.Occurrences, l.NextPage != ""
			}
			msg.err, msg.at = wrap1("dlq", err), opt.Now()
			return msg
		}
	}
	return nil
}

// fetchSchedules reads the schedule list (up to maxSchedules) and the
// recent activity their lag and failures are computed from.
func fetchSchedules(ctx context.Context, src Source) schedulesMsg {
	var msg schedulesMsg
	o := client.ListSchedulesOptions{Limit: 500}
	seen := map[string]bool{}
	for {
		page, err := src.ListSchedules(ctx, o)
		if err != nil {
			msg.err = wrap1("list schedules", err)
			return msg
		}
		msg.list = append(msg.list, page.Schedules...)
		if page.NextPage == "" || seen[page.NextPage] || len(page.Schedules) == 0 {
			break
		}
		if len(msg.list) >= maxSchedules {
			msg.list, msg.more = msg.list[:maxSchedules], true
			break
		}
		seen[page.NextPage] = true
		o.Page = page.NextPage
	}
	done, err := src.ListOccurrences(ctx, client.ListOccurrencesOptions{State: "SUCCEEDED", Reverse: true, Limit: activityLimit})
	if err != nil {
		msg.err = wrap1("recent occurrences", err)
		return msg
	}
	waiting, err := src.ListOccurrences(ctx, client.ListOccurrencesOptions{State: "ENQUEUED", Limit: activityLimit})
	if err != nil {
		msg.err = wrap1("waiting occurrences", err)
		return msg
	}
	dead, err := src.ListDLQ(ctx, client.ListDLQOptions{Reverse: true, Limit: activityLimit})
	if err != nil {
		msg.err = wrap1("dlq", err)
		return msg
	}
	msg.act = computeActivity(done.Occurrences, waiting.Occurrences, dead.Occurrences)
	return msg
}

func wrap1(what string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{what: what, err: err}
}

// opError names the request that failed.
type opError struct {
	what string
	err  error
}

func (e *opError) Error() string { return e.what + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// errText is an error for one line: the daemon's own message when it
// answered; else what went wrong in the transport, without the address
// and the layers around it (the banner says which daemon).
func errText(err error) string {
	var ce *client.Error
	switch {
	case errors.As(err, &ce):
		return clean(ce.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	parts := strings.Split(clean(err.Error()), ": ")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, ": ")
}

// record keeps the last minute's p99s of a fresh statistics snapshot.
func (m *Model) record(st *api.Status) {
	at := st.StatsAt
	if at.IsZero() {
		at = st.Now
	}
	if n := len(m.history); n > 0 && !at.After(m.history[n-1].at) {
		return
	}
	if st.ScheduleLag == nil || st.DeliveryLag == nil {
		return // a tenant's status: no lags to trend
	}
	s := lagSample{at: at}
	if d, ok := parseDur(st.ScheduleLag.LastMinute.P99); ok {
		s.sched, s.schedOK = d.Seconds(), true
	}
	if d, ok := parseDur(st.DeliveryLag.LastMinute.P99); ok {
		s.deliv, s.delivOK = d.Seconds(), true
	}
	m.history = append(m.history, s)
	if len(m.history) > sparkSamples {
		m.history = slices.Clone(m.history[len(m.history)-sparkSamples:])
	}
}

// say shows a notice for a few seconds.
func (m *Model) say(at time.Time, bad bool, text string) {
	m.note = notice{text: text, bad: bad, until: at.Add(noticeFor)}
}

// onKey handles a keypress. While a replay waits for its confirmation only
// y and n (and ctrl+c) count; while the filter is typed, keys are text.
func (m Model) onKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if key.Matches(msg, k.ForceQuit) {
		return m, tea.Quit
	}
	if m.confirm != nil {
		switch {
		case key.Matches(msg, k.Yes):
			occ := m.confirm
			m.confirm = nil
			return m, m.replay(occ.OccurrenceID)
		case key.Matches(msg, k.No):
			m.confirm = nil
			m.say(m.now, false, "replay canceled")
		}
		return m, nil
	}
	if m.filtering {
		return m.onFilterKey(msg)
	}
	if m.showHelp && (key.Matches(msg, k.Help) || msg.String() == "esc") {
		m.showHelp = false
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return m, nil
	case key.Matches(msg, k.Next):
		return m.switchTo((m.view + 1) % numViews)
	case key.Matches(msg, k.Prev):
		return m.switchTo((m.view + numViews - 1) % numViews)
	}
	switch m.view {
	case viewSchedules:
		return m.onSchedulesKey(msg)
	case viewDLQ:
		return m.onDLQKey(msg)
	}
	return m, nil
}

// switchTo shows view v and starts what it needs at once, not at the next
// tick: the schedule list only when the one at hand is older than
// schedulesEvery.
func (m Model) switchTo(v view) (tea.Model, tea.Cmd) {
	m.view = v
	m.showHelp = false
	return m, m.fetch()
}

// replay starts the replay of one DLQ entry.
func (m *Model) replay(id string) tea.Cmd {
	if m.replaying {
		return nil
	}
	m.replaying = true
	m.say(m.now, false, "replaying "+id+"…")
	src, opt := m.src, m.opt
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(opt.Context, opt.Timeout)
		defer cancel()
		occ, err := src.Replay(ctx, id)
		return replayMsg{id: id, occ: occ, err: err, at: opt.Now()}
	}
}

// move shifts a cursor by delta within n rows; page moves use the height
// of the list as the view draws it.
func move(cur, delta, n int) int {
	return min(max(cur+delta, 0), max(n-1, 0))
}

// listKey is the movement a navigation key asks for in a list of n rows
// showing page at a time; ok is false for another key.
func (m *Model) listKey(msg tea.KeyPressMsg, cur, n, page int) (int, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		return move(cur, -1, n), true
	case key.Matches(msg, k.Down):
		return move(cur, 1, n), true
	case key.Matches(msg, k.PageUp):
		return move(cur, -max(1, page), n), true
	case key.Matches(msg, k.PageDown):
		return move(cur, max(1, page), n), true
	case key.Matches(msg, k.Top):
		return 0, true
	case key.Matches(msg, k.Bottom):
		return max(n-1, 0), true
	}
	return cur, false
}

// scroll returns the first row to show so that cur is visible in a window
// of rows lines, moving off as little as possible.
func scroll(off, cur, rows, n int) int {
	if rows <= 0 {
		return 0
	}
	if cur < off {
		off = cur
	}
	if cur >= off+rows {
		off = cur - rows + 1
	}
	return max(0, min(off, n-rows))
}

// scrollIntoView keeps both lists' selections visible after a resize.
func (m *Model) scrollIntoView() {
	m.schedOff = scroll(m.schedOff, m.schedCursor(), m.layoutSchedules().tableRows, len(m.rows))
	m.dlqOff = scroll(m.dlqOff, m.dlqCursor(), m.layoutDLQ().tableRows, len(m.dlqRows))
}

// size is the terminal's size, 80x24 until the first WindowSizeMsg.
func (m *Model) size() (int, int) {
	w, h := m.width, m.height
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	return w, h
}

// clock writes an instant as the wall time in the dashboard's zone.
func (m *Model) clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(m.opt.Location).Format("15:04:05")
}

// stamp writes an instant as a time of day when it is today (in the
// dashboard's zone), with the date otherwise.
func (m *Model) stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	lt, ln := t.In(m.opt.Location), m.daemonNow().In(m.opt.Location)
	if lt.YearDay() == ln.YearDay() && lt.Year() == ln.Year() {
		return lt.Format("15:04:05")
	}
	return lt.Format("01-02 15:04")
}

// daemonNow is the daemon's clock as of the last status (times it sends are
// judged against it), else the dashboard's.
func (m *Model) daemonNow() time.Time { return m.daemonAt(m.now) }

// daemonAt is the daemon's clock at t (on the dashboard's clock), reckoned
// from the last status; t itself before any status.
func (m *Model) daemonAt(t time.Time) time.Time {
	if m.status != nil && !m.status.Now.IsZero() {
		// The status is from statusAt; move its clock on since.
		return m.status.Now.Add(max(0, t.Sub(m.statusAt)))
	}
	return t
}
