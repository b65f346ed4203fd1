package postgres

import (
	"context"
	"testing"
	"time"
)

// TestRunningKey: a transaction counting a tenant's RUNNING occurrences
// holds the tenant's running key until it ends, so another claim of the
// tenant counts after it: one that may not wait is told the key is held
// (and counts nothing), one that may waits for the commit; another
// tenant's key is free meanwhile.
func TestRunningKey(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := t.Context()
	first, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(context.WithoutCancel(ctx))
	if _, held, err := first.CountRunning(ctx, "tenant-a", true); err != nil || !held {
		t.Fatalf("first count: held %v, %v", held, err)
	}
	second, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Rollback(context.WithoutCancel(ctx))
	if _, held, err := second.CountRunning(ctx, "tenant-a", false); err != nil || held {
		t.Fatalf("a count that may not wait, while another holds the key: held %v, %v; want not held", held, err)
	}
	if _, held, err := second.CountRunning(ctx, "tenant-b", false); err != nil || !held {
		t.Fatalf("another tenant's count: held %v, %v; want held", held, err)
	}
	done := make(chan error, 1)
	go func() {
		_, held, err := second.CountRunning(ctx, "tenant-a", true)
		if err == nil && !held {
			t.Error("a count that waits: not held")
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a count that waits returned while the key was held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
