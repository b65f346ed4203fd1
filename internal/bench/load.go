package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// loadConcurrency is how many batches the loader keeps in flight.
const loadConcurrency = 4

// create is one schedule to load, and the client of the tenant it belongs to.
type create struct {
	c   *client.Client
	req api.ScheduleRequest
}

// load creates every schedule and returns the answers in reqs' order. It
// is the one place that knows how schedules reach schedd: batches of up
// to api.MaxBatchItems consecutive schedules of one tenant
// (POST /v1/schedules:batch), loadConcurrency at a time, each retried
// whole on a busy or rate-limited answer (safe: every item carries an
// idempotency key). An item refused is an error of the run.
func load(ctx context.Context, reqs []create) ([]*api.CreateResult, error) {
	out := make([]*api.CreateResult, len(reqs))
	type batch struct{ from, to int }
	var batches []batch
	for from := 0; from < len(reqs); {
		to := from + 1
		for to < len(reqs) && to-from < api.MaxBatchItems && reqs[to].c == reqs[from].c {
			to++
		}
		batches = append(batches, batch{from, to})
		from = to
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) { once.Do(func() { firstErr = err; cancel() }) }
	for range min(loadConcurrency, len(batches)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batches) || ctx.Err() != nil {
					return
				}
				b := batches[i]
				items := make([]api.BatchItem, 0, b.to-b.from)
				for _, r := range reqs[b.from:b.to] {
					items = append(items, api.BatchItem{Schedule: r.req})
				}
				res, err := createBatch(ctx, reqs[b.from].c, items)
				if err != nil {
					fail(fmt.Errorf("create %s..%s: %w", reqs[b.from].req.Name, reqs[b.to-1].req.Name, err))
					return
				}
				for _, it := range res.Items {
					if it.Status == api.BatchError || it.Schedule == nil || it.Index < 0 || it.Index >= len(items) {
						fail(fmt.Errorf("create %s: %w", items[min(max(it.Index, 0), len(items)-1)].Schedule.Name, client.ItemError(it)))
						return
					}
					out[b.from+it.Index] = &api.CreateResult{Schedule: *it.Schedule, Created: it.Status == api.BatchCreated}
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for i, a := range out {
		if a == nil {
			return nil, fmt.Errorf("create %s: no answer for it", reqs[i].req.Name)
		}
	}
	return out, ctx.Err()
}

// createBatch creates one batch, retrying what schedd asks to retry.
func createBatch(ctx context.Context, c *client.Client, items []api.BatchItem) (*api.BatchResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := c.CreateSchedules(ctx, items)
		if err == nil || !retryable(err) || attempt >= 50 {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
}

// retryable reports whether a request may be sent again as is: schedd
// busy, shutting down a listener, or a rate or waiting-claims limit.
func retryable(err error) bool {
	var e *client.Error
	if errors.As(err, &e) {
		switch e.Code {
		case api.CodeStoreBusy, api.CodeRateLimited, api.CodeTooManyWaiting:
			return true
		}
		return e.Status == http.StatusServiceUnavailable
	}
	return false
}
