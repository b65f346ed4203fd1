package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/client"
)

// A pool worker claims every tenant's work (all_tenants) and heartbeats,
// acks and nacks each job as its tenant: the ack a claim carries names the
// tenant, and a request on the occurrence's route sends it as the
// Sched-Tenant header.
func TestWorkerPoolActsAsEachJobsTenant(t *testing.T) {
	q := newFakeQueue(t)
	w := &client.Worker{
		Client: q.client(t), Queue: "q", WorkerID: "pool", Wait: time.Second, Lease: 3 * time.Second, Pool: true,
		Handler: func(ctx context.Context, job *client.Job) error {
			if job.OccurrenceID == "b" {
				return errors.New("try again")
			}
			time.Sleep(1200 * time.Millisecond) // one heartbeat (every Lease/3)
			return nil
		},
	}
	a, b, c := job("a", 1), job("b", 1), job("c", 1)
	a.Tenant, b.Tenant, c.Tenant = "t1", "t2", "t3"
	q.add(a)
	stop := runWorker(t, w)
	if got := q.next(t); got != "ack a 1" {
		t.Fatalf("got %q, want a's ack", got)
	}
	q.add(b)
	if got := q.next(t); got != "nack b 1 retryable: try again" {
		t.Fatalf("got %q, want b's nack", got)
	}
	q.add(c)
	if got := q.next(t); got != "ack c 1" {
		t.Fatalf("got %q, want c's ack", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, cl := range q.claims {
		if !cl.AllTenants {
			t.Fatalf("claim %+v: want all_tenants", cl)
		}
	}
	for _, want := range []string{"beat a t1", "nack b t2"} {
		if !slices.Contains(q.acting, want) {
			t.Errorf("no %q in %q", want, q.acting)
		}
	}
	// Each ack names its tenant, whether it went with a claim or alone.
	for id, tenant := range map[string]string{"a": "t1", "c": "t3"} {
		if !slices.Contains(q.acting, "claim-ack "+id+" "+tenant) && !slices.Contains(q.acting, "ack "+id+" "+tenant) {
			t.Errorf("%s's ack did not name its tenant %s: %q", id, tenant, q.acting)
		}
	}
}
