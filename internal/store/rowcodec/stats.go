package rowcodec

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/store"
)

// Limits of the stats (store.StatsStore).
const (
	// DefaultBacklogBuckets is SnapshotParams.Buckets when it is 0: the
	// next hour.
	DefaultBacklogBuckets = 60
	// MaxBacklogBuckets is a day of one-minute buckets.
	MaxBacklogBuckets = 1440
	// MaxStatData is the largest StatMinute.Data a store keeps, in bytes
	// (the stat_minutes table's CHECK says the same).
	MaxStatData = 64 << 10
)

// SnapshotRead is a store.Snapshot being assembled from the rows of a
// driver's snapshot statements. Now, From and End are what the statements
// bind: the snapshot's now, and the due backlog's window [From, End), all
// in unix milliseconds; Tenant is the tenant whose snapshot it is ("":
// every tenant's).
type SnapshotRead struct {
	Now, From, End int64
	Tenant         string
	Snap           store.Snapshot
}

// DepthArgs are the arguments of the depth and oldest ready statements:
// now, then the tenant in a tenant's snapshot.
func (r *SnapshotRead) DepthArgs() []any {
	if r.Tenant == "" {
		return []any{r.Now}
	}
	return []any{r.Now, r.Tenant}
}

// DueArgs are the arguments of the due backlog's statements: the window's
// start and end, then the tenant in a tenant's snapshot.
func (r *SnapshotRead) DueArgs() []any {
	if r.Tenant == "" {
		return []any{r.From, r.End}
	}
	return []any{r.From, r.End, r.Tenant}
}

// NewSnapshotRead checks p and returns the snapshot to fill. The due
// backlog has p.Buckets one-minute buckets (DefaultBacklogBuckets when 0,
// at most MaxBacklogBuckets) counted from p.BacklogFrom, or from p.Now
// when it is zero; a BacklogFrom after p.Now is refused.
func NewSnapshotRead(p store.SnapshotParams) (*SnapshotRead, error) {
	buckets := p.Buckets
	if buckets == 0 {
		buckets = DefaultBacklogBuckets
	}
	if buckets < 1 || buckets > MaxBacklogBuckets {
		return nil, fmt.Errorf("%d buckets: want 1 to %d", p.Buckets, MaxBacklogBuckets)
	}
	from := p.Now
	if !p.BacklogFrom.IsZero() {
		if p.BacklogFrom.After(p.Now) {
			return nil, fmt.Errorf("backlog from %s: after now, %s", p.BacklogFrom.UTC().Format(time.RFC3339Nano), p.Now.UTC().Format(time.RFC3339Nano))
		}
		from = p.BacklogFrom
	}
	r := &SnapshotRead{Now: MS(p.Now), From: MS(from), Tenant: p.TenantID, Snap: store.Snapshot{DueBacklog: make([]int64, buckets)}}
	r.End = r.From + int64(buckets)*time.Minute.Milliseconds()
	return r, nil
}

// AddDepth reads a row of the depth statement (tenant, queue, lane,
// state, count, ready) into the snapshot.
func (r *SnapshotRead) AddDepth(row Scanner) error {
	var (
		d           store.DepthRow
		lane, state string
	)
	if err := row.Scan(&d.TenantID, &d.Queue, &lane, &state, &d.Count, &d.Ready); err != nil {
		return err
	}
	d.Lane, d.State = record.Lane(lane), record.OccurrenceState(state)
	r.Snap.Depth = append(r.Snap.Depth, d)
	return nil
}

// AddQueueOldest reads a row of the queues' oldest ready statement
// (tenant, queue, the earliest available_at of its ready occurrences, unix
// milliseconds) into the snapshot. A row whose time is NULL is a queue
// with none ready, which has no entry.
func (r *SnapshotRead) AddQueueOldest(row Scanner) error {
	var (
		q  store.QueueOldestReady
		at *int64
	)
	if err := row.Scan(&q.TenantID, &q.Queue, &at); err != nil {
		return err
	}
	if at == nil {
		return nil
	}
	q.AvailableAt = FromMS(*at)
	r.Snap.QueueOldestReady = append(r.Snap.QueueOldestReady, q)
	return nil
}

// AddDue reads a row of a due backlog statement (the minute from From,
// the count) and adds its count to the minute's bucket. A minute outside
// the buckets is an error: the statement bounds its rows by From and End.
func (r *SnapshotRead) AddDue(row Scanner) error {
	var minute, n int64
	if err := row.Scan(&minute, &n); err != nil {
		return err
	}
	if minute < 0 || minute >= int64(len(r.Snap.DueBacklog)) {
		return fmt.Errorf("minute %d outside the %d buckets", minute, len(r.Snap.DueBacklog))
	}
	r.Snap.DueBacklog[minute] += n
	return nil
}

// CheckStatMinute refuses a row with no node id or more than MaxStatData
// bytes of data: a write of stat minutes fails whole on one.
func CheckStatMinute(m store.StatMinute) error {
	if m.NodeID == "" || len(m.Data) > MaxStatData {
		return fmt.Errorf("bad row (node %q, minute %s, %d bytes of data; at most %d)",
			m.NodeID, m.Minute.UTC().Format(time.RFC3339), len(m.Data), MaxStatData)
	}
	return nil
}

// ScanStatMinute reads a row of the stat_minutes columns (node_id, minute,
// data).
func ScanStatMinute(row Scanner) (*store.StatMinute, error) {
	var (
		m      store.StatMinute
		minute int64
	)
	if err := row.Scan(&m.NodeID, &minute, &m.Data); err != nil {
		return nil, err
	}
	m.Minute = FromMS(minute)
	return &m, nil
}

// AddRuns moves what unfolded runs hold (store.RunTotal) to the states
// they stand for: their rows still say ENQUEUED, but a run's occurrences
// are RUNNING until acked and finished after (docs/engine.md, "Leased
// runs"). Every leased row is due (it was claimed), so it leaves Ready
// too. The depth stays in its order.
func (r *SnapshotRead) AddRuns(ts []store.RunTotal) {
	find := func(t store.RunTotal, state record.OccurrenceState) int {
		for i, d := range r.Snap.Depth {
			if d.TenantID == t.TenantID && d.Queue == t.Queue && d.Lane == t.Lane.Lane && d.State == state {
				return i
			}
		}
		return -1
	}
	for _, t := range ts {
		if i := find(t, record.OccurrenceEnqueued); i >= 0 {
			d := &r.Snap.Depth[i]
			d.Count, d.Ready = max(d.Count-t.Leased, 0), max(d.Ready-t.Leased, 0)
		}
		if running := t.Leased - t.Acked; running > 0 {
			if i := find(t, record.OccurrenceRunning); i >= 0 {
				r.Snap.Depth[i].Count += running
			} else {
				r.Snap.Depth = append(r.Snap.Depth, store.DepthRow{TenantID: t.TenantID, Queue: t.Queue, Lane: t.Lane.Lane,
					State: record.OccurrenceRunning, Count: running})
			}
		}
	}
	r.Snap.Depth = slices.DeleteFunc(r.Snap.Depth, func(d store.DepthRow) bool { return d.Count == 0 })
	slices.SortFunc(r.Snap.Depth, func(a, b store.DepthRow) int {
		return cmp.Or(cmp.Compare(a.TenantID, b.TenantID), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Lane, b.Lane),
			cmp.Compare(a.State, b.State))
	})
}
