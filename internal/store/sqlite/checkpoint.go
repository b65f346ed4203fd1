package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoint settings.
const (
	// checkpointGap is the least time between two background checkpoints:
	// commits in between are copied to the database file together, so a
	// page rewritten in many commits (the queue's, the planner's indexes)
	// is copied once per gap, and the pages scattered over the file (the
	// planner's cursors, one page per due schedule) are written back in
	// one large batch. The size of that batch decides what a page costs:
	// on the development machine's disk an fsync of 1,000 pages scattered
	// over 7 GB took 37-42 ms and over 370 MB 18-28 ms, while 20,000
	// pages took 116-143 ms over either span. At 100 ms the planner's
	// store work per due schedule was 1.3 times as high at 20 million
	// schedules as at 1 million; at 1 s its commit costs the same at both
	// (docs/BENCHMARKS.md, "The planner's cost per due schedule").
	checkpointGap = time.Second
	// checkpointIdle is how often the checkpointer looks on its own, for
	// the writes made outside a transaction (leases, node heartbeats),
	// which do not tell it.
	checkpointIdle = time.Second
	// writerCheckpointPages is the writer's own wal_autocheckpoint (256
	// MiB). The writer still checkpoints when the WAL reaches it, because
	// only the writer starts the WAL over from its beginning, and only at
	// the start of a transaction that finds every frame copied back: under
	// steady writes the checkpointer never gets there between two commits,
	// and the WAL grows to this threshold and stays that size on disk. By
	// the time the writer checkpoints, the checkpointer has copied nearly
	// every frame, so the writer's checkpoint is short. It is far above
	// what a checkpointGap of commits writes (the planner at full speed
	// writes about 100 MB of WAL a second), so that the writer does not
	// take the checkpointer's work over, with its fsync inside a commit.
	writerCheckpointPages = 65536
)

// checkpointer copies the WAL back into the database file (a PASSIVE
// checkpoint) on a connection of its own, after the writer commits, at
// most once per checkpointGap, and every checkpointIdle.
//
// With SQLite's automatic checkpoints the writer did this itself, inside
// the commit that crossed the threshold: the copy and the database file's
// fsync held up the next write for a fifth of the planner's time
// (BenchmarkMaterialize with checkpoints off: 26.8k occurrences/s against
// 22.6k). Here they run beside the writer, on the other core: a WAL
// checkpoint never blocks writers, and a PASSIVE one never waits for
// readers. The writer's own checkpoint (writerCheckpointPages) may run
// at the same moment as this connection's: two connections checkpointing
// at once is the condition of SQLite's WAL-reset bug, which corrupted the
// database before SQLite 3.51.3; TestSQLiteVersion holds the bundled SQLite
// to that release or later.
//
// It plays no part in durability: a commit is durable once the writer's
// fsync of the WAL returns (synchronous=FULL), and a checkpoint only
// changes where a committed page lives, never whether it is committed.
type checkpointer struct {
	db     *sql.DB
	kick   chan struct{}
	stop   chan struct{}
	ctx    context.Context // canceled by close, so a long checkpoint does not hold it up
	cancel context.CancelFunc
	wg     sync.WaitGroup

	lastErr atomic.Pointer[error]
}

// startCheckpointer opens the checkpoint connection on path and starts its
// goroutine.
func startCheckpointer(ctx context.Context, path string, o options) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(path, o, roleCheckpointer))
	if err != nil {
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("checkpointer: %w", translate(err))
	}
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Go(c.loop)
	return c, nil
}

// committed tells the checkpointer that the WAL has grown. It never
// blocks.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		case <-time.After(checkpointIdle):
		}
		c.checkpoint()
		select {
		case <-c.stop:
			return
		case <-time.After(checkpointGap):
		}
	}
}

// checkpoint runs one PASSIVE checkpoint. A failure is kept for
// lastError and the next commit tries again; meanwhile the WAL only grows,
// up to the writer's own threshold.
func (c *checkpointer) checkpoint() {
	var busy, log, done int64
	err := c.db.QueryRowContext(c.ctx, qCheckpoint).Scan(&busy, &log, &done)
	if err != nil {
		err = fmt.Errorf("checkpoint: %w", translate(err))
		c.lastErr.Store(&err)
		return
	}
	c.lastErr.Store(nil)
}

// lastError is the error of the latest checkpoint, nil if it succeeded.
func (c *checkpointer) lastError() error {
	if p := c.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// close stops the goroutine and closes the connection.
func (c *checkpointer) close() error {
	close(c.stop)
	c.cancel()
	c.wg.Wait()
	return c.db.Close()
}
