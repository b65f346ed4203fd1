package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// claimWait is each claim's long poll.
const claimWait = 2 * time.Second

// delivery is one occurrence as a consumer received it.
type delivery struct {
	occID, schedID, tenant string
	scheduledFor           time.Time
	attempt                int64
	received               time.Time
	leaseExpires           time.Time
	acked                  time.Time // when the claim carrying its ack answered; zero if never
}

// consumers claim a queue in batches, acknowledging each batch inside the
// next claim, and record every delivery. The handler does nothing: the
// bench measures schedd, not work.
type consumers struct {
	c      *client.Client
	queue  string
	batch  int
	lease  time.Duration
	pool   bool // claim every tenant's work (all_tenants)
	inWant func(d *delivery) bool

	mu         sync.Mutex
	all        []*delivery
	seen       map[string]bool // occurrence ids counted toward want
	got        atomic.Int64    // distinct wanted occurrences received
	errs       []string
	ackRefused int
}

// run starts n consumers and returns when ctx ends, after acknowledging
// their last batches.
func (cs *consumers) run(ctx context.Context, n int, done func(got int64) bool, finished chan<- struct{}) {
	cs.seen = map[string]bool{}
	var wg sync.WaitGroup
	var once sync.Once
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := cs.loop(ctx, fmt.Sprintf("bench-%d", i), func(got int64) {
				if done(got) {
					once.Do(func() { close(finished) })
				}
			})
			cs.flush(last)
		}()
	}
	wg.Wait()
}

// loop is one consumer; it returns the batch it has not acknowledged yet.
func (cs *consumers) loop(ctx context.Context, id string, progress func(int64)) []*delivery {
	var pending []*delivery
	for ctx.Err() == nil {
		req := api.ClaimRequest{Queue: cs.queue, WorkerID: id, Limit: cs.batch, Lease: cs.lease.String(),
			Wait: claimWait.String(), AllTenants: cs.pool}
		for _, d := range pending {
			item := api.AckItem{OccurrenceID: d.occID, Attempt: d.attempt}
			if cs.pool {
				item.Tenant = d.tenant
			}
			req.Acks = append(req.Acks, item)
		}
		res, err := cs.c.Claim(ctx, req)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if !retryable(err) {
				cs.note("claim: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		refused := 0
		for i, a := range res.Acks {
			if a.Error == nil && i < len(pending) {
				pending[i].acked = now
			} else if a.Error != nil {
				refused++
			}
		}
		pending = pending[:0:0]
		for _, cl := range res.Claimed {
			pending = append(pending, &delivery{occID: cl.OccurrenceID, schedID: cl.ScheduleID, tenant: cl.Tenant,
				scheduledFor: cl.ScheduledFor, attempt: cl.Attempt, received: now, leaseExpires: cl.LeaseExpiresAt})
		}
		cs.record(pending, refused, progress)
	}
	return pending
}

// record keeps a batch's deliveries and counts the new wanted ones.
func (cs *consumers) record(batch []*delivery, refused int, progress func(int64)) {
	cs.mu.Lock()
	cs.ackRefused += refused
	var added int64
	for _, d := range batch {
		cs.all = append(cs.all, d)
		if cs.inWant(d) && !cs.seen[d.occID] {
			cs.seen[d.occID] = true
			added++
		}
	}
	cs.mu.Unlock()
	progress(cs.got.Add(added))
}

// flush acknowledges a consumer's last batch, which no next claim carries.
func (cs *consumers) flush(batch []*delivery) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, d := range batch {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			actx := ctx
			if cs.pool {
				actx = client.WithTenant(ctx, d.tenant)
			}
			if _, err := cs.c.Ack(actx, d.occID, api.AckRequest{Attempt: d.attempt}); err != nil {
				cs.note("ack %s: %v", d.occID, err)
				return
			}
			cs.mu.Lock()
			d.acked = time.Now()
			cs.mu.Unlock()
		}()
	}
	wg.Wait()
}

// note records an error, keeping the first few.
func (cs *consumers) note(format string, args ...any) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.errs) < 10 {
		cs.errs = append(cs.errs, fmt.Sprintf(format, args...))
	}
}
