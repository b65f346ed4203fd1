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

// loadConcurrency is how many creates the loader keeps in flight.
const loadConcurrency = 32

// create is one schedule to load, and the client of the tenant it belongs to.
type create struct {
	c   *client.Client
	req api.ScheduleRequest
}

// load creates every schedule and returns the answers in reqs' order. It
// is the one place that knows how schedules reach schedd: one
// CreateSchedule per schedule, loadConcurrency at a time, each retried on
// a busy or rate-limited answer (safe: every request carries an
// idempotency key).
func load(ctx context.Context, reqs []create) ([]*api.CreateResult, error) {
	out := make([]*api.CreateResult, len(reqs))
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(loadConcurrency, len(reqs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(reqs) || ctx.Err() != nil {
					return
				}
				res, err := createOne(ctx, reqs[i])
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("create %s: %w", reqs[i].req.Name, err); cancel() })
					return
				}
				out[i] = res
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, ctx.Err()
}

// createOne creates one schedule, retrying what schedd asks to retry.
func createOne(ctx context.Context, r create) (*api.CreateResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := r.c.CreateSchedule(ctx, r.req)
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
