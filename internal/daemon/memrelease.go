package daemon

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// What a burst of connections leaves behind, and when it is given back.
//
// Each open connection holds a goroutine (two while it serves a claim with
// a wait: the handler and net/http's reader watching for the client going
// away), their stacks, and net/http's buffers (4 KB to read, 4 KB and 2 KB
// to write): some 31 KB for a waiting claim (11 KB of stacks, now that the
// engine runs a claim's store calls on a goroutine of their own; it was
// 19 KB), 20 KB for an idle keep-alive connection. When thousands
// of them close at once, that memory is garbage the runtime gives back to
// the operating system only after its next collection, and an idle daemon
// allocates so little that the next one may be two minutes away (the
// runtime's forced collection), after which its scavenger returns the
// pages slowly. So a schedd that served 5,000 long polls kept its RSS at
// several hundred megabytes long after they ended.
//
// memReleaser counts the open connections of every listener and, once
// they fall to half of a peak of at least releaseMinPeak and stay still for
// releaseSettle, collects twice and calls debug.FreeOSMemory: the first
// collection moves net/http's pooled buffers (sync.Pool) to the pools'
// victim cache, the second drops them, and every free page goes back at
// once. The collections are of what is left, which is small by then. At
// most once per releaseEvery, so that connections coming and going cost
// at most one collection per interval. A memory limit
// (debug.SetMemoryLimit) would not do it: it makes the runtime collect
// and return memory only near the limit, which a daemon cannot choose
// without knowing its machine.
type memReleaser struct {
	open atomic.Int64
	peak atomic.Int64 // the most open since the last release
	kick chan struct{}
	log  *slog.Logger
}

const (
	releaseMinPeak = 1000 // connections: tens of megabytes
	releaseSettle  = 500 * time.Millisecond
	releaseEvery   = 10 * time.Second
)

func newMemReleaser(log *slog.Logger) *memReleaser {
	return &memReleaser{kick: make(chan struct{}, 1), log: log}
}

func (m *memReleaser) opened() {
	n := m.open.Add(1)
	for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
}

func (m *memReleaser) closed() {
	if n := m.open.Add(-1); m.due(n) {
		select {
		case m.kick <- struct{}{}:
		default:
		}
	}
}

// due reports whether, with n connections open, the peak since the last
// release was large and is over.
func (m *memReleaser) due(n int64) bool {
	p := m.peak.Load()
	return p >= releaseMinPeak && n <= p/2
}

// run releases memory when it is due, until ctx ends.
func (m *memReleaser) run(ctx context.Context) {
	sleep := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		}
		// Let the burst finish closing.
		for n := m.open.Load(); ; n = m.open.Load() {
			if !sleep(releaseSettle) {
				return
			}
			if m.open.Load() == n {
				break
			}
		}
		n := m.open.Load()
		if !m.due(n) {
			continue
		}
		peak := m.peak.Swap(n)
		began := time.Now()
		// Two collections: the closed connections' buffers went back to
		// net/http's pools (sync.Pool), which keep what they hold through
		// one collection and drop it at the next.
		runtime.GC()
		debug.FreeOSMemory()
		m.log.Info("returned memory to the operating system after a burst of connections ended",
			"peak_connections", peak, "open_connections", n, "took", time.Since(began).Round(time.Microsecond).String())
		if !sleep(releaseEvery) {
			return
		}
	}
}
