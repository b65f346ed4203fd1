package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// analyzeEvery is how many occurrences a store inserts (planned or
// inserted directly) before it refreshes the statistics of the
// occurrences table itself, without waiting for autovacuum.
//
// At the top of the hour the table holds a burst materialized in the
// minute before it, which autovacuum has not analyzed yet (it looks once
// a minute, and only after a tenth of the table changed). Planned on the
// old statistics, reads of the queue that seek a position (the snapshot's
// due backlog, a requeue) walk the whole burst: 120,000 pages against 100
// for a lane of 60,000 firings, measured (TestRunPlans). ANALYZE reads a
// sample of 30,000 rows, a fraction of a second, and blocks no write.
const analyzeEvery = 100_000

// analyzeTimeout bounds one ANALYZE.
const analyzeTimeout = time.Minute

// statsKeeper counts the occurrences inserted since the last ANALYZE and
// runs one in the background past analyzeEvery: one at a time per store,
// and Close waits for it.
type statsKeeper struct {
	every    int64 // analyzeEvery; a test sets less
	inserted atomic.Int64
	running  atomic.Bool
	wg       sync.WaitGroup
	stop     context.Context
	cancel   context.CancelFunc
}

// noteInserted counts n occurrences a committed transaction inserted and
// starts an ANALYZE of occurrences when enough have been since the last.
// A failed ANALYZE (a lock timeout behind autovacuum's, a lost
// connection) is left to the next one, or to autovacuum: statistics make
// plans good, never results right.
func (s *Store) noteInserted(n int) {
	k := &s.stats
	if n <= 0 || k.inserted.Add(int64(n)) < k.every || !k.running.CompareAndSwap(false, true) {
		return
	}
	k.inserted.Store(0)
	k.wg.Go(func() {
		defer k.running.Store(false)
		ctx, cancel := context.WithTimeout(k.stop, analyzeTimeout)
		defer cancel()
		_, _ = s.pool.Exec(ctx, qAnalyzeOccurrences)
	})
}

// waitStats waits for a running ANALYZE, for Close and tests.
func (s *Store) waitStats() { s.stats.wg.Wait() }
