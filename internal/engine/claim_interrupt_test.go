package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestClaimInterruptedSaysCanceled: a claim whose context ends while its
// store transaction runs (a shutdown draining the long polls, a client
// gone) fails with an error that is context.Canceled, whatever the store
// answered (SQLite: "interrupted"), so the server can tell it from a
// failure; and it claimed nothing. On a file-backed SQLite store with a
// backlog, the cancel lands after a growing delay until some claims were
// cut (a claim of 1,000 takes milliseconds; before the fix SQLite's
// "interrupted" or database/sql's "transaction has already been committed
// or rolled back" came back as they were, and the server answered 500).
func TestClaimInterruptedSaysCanceled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2097-03-01T00:00:00Z"), func(c *Config) { c.Horizon = time.Hour })
	for i := range 4 {
		h.create(every(fmt.Sprintf("s%d", i), "1s"))
	}
	h.plan()
	h.clk.Advance(time.Hour) // 4 × 3,600 firings due, none planned since
	running := func() int {
		t.Helper()
		n := 0
		for i := range 4 {
			sc := h.schedule(fmt.Sprintf("s%d", i))
			for _, o := range h.occurrences(sc.ScheduleID) {
				if o.AttemptCount > 0 {
					n++
				}
			}
		}
		return n
	}
	cut, claimed := 0, 0
	for try := 0; try < 200 && cut < 3; try++ {
		ctx, cancel := context.WithCancel(h.ctx)
		delay := time.Duration(try%20) * 500 * time.Microsecond
		timer := time.AfterFunc(delay, cancel)
		got, err := h.e.Queue.Claim(ctx, ClaimRequest{TenantID: tenant, Queue: "q", WorkerID: "w", Limit: MaxClaimBatch, Lease: time.Hour})
		timer.Stop()
		cancel()
		switch {
		case err == nil:
			claimed += len(got)
		case !errors.Is(err, context.Canceled):
			t.Fatalf("try %d, canceled after %s: %v; want an error that is context.Canceled", try, delay, err)
		default:
			cut++
		}
		if claimed > 4*3600-MaxClaimBatch {
			break
		}
	}
	if cut == 0 {
		t.Skip("no cancel landed inside a claim on this machine")
	}
	if n := running(); n != claimed {
		t.Errorf("%d occurrences claimed, %d answered: an interrupted claim left rows claimed", n, claimed)
	}
}
