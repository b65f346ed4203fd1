package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testTargets pins the targets' rows (store.TargetStore, store.TargetTx):
// a name is unique within its tenant only, an update is conditional on the
// version read, a tenant's reads see its own targets alone, the secret is
// kept as written, and the schedules that still name a target are counted
// by its queue, live ones only.
func testTargets(t *testing.T, open func(t *testing.T) Store) {
	t.Run("TargetRows", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		tg := record.Target{TenantID: "acme", Name: "orders", Kind: record.TargetWebhook,
			Config: []byte(`{"url":"https://hooks.example/orders"}`), Secret: "whsec_c2VjcmV0",
			Version: 1, CreatedAt: at(0), UpdatedAt: at(0)}
		inTx(t, s, func(tx store.Tx) error { return tx.InsertTarget(ctx, &tg) })
		sameTarget(t, "GetTarget", s, tg)
		if _, err := s.GetTarget(ctx, "beta", "orders"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTarget of another tenant's name: %v; want ErrNotFound", err)
		}
		err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.InsertTarget(ctx, &tg) })
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("InsertTarget twice: %v; want ErrConflict", err)
		}
		// The same name in another tenant is another target.
		theirs := tg
		theirs.TenantID, theirs.Kind, theirs.Config, theirs.Secret = "beta", record.TargetNATS, []byte(`{"subject":"orders.fire"}`), ""
		inTx(t, s, func(tx store.Tx) error { return tx.InsertTarget(ctx, &theirs) })

		next := tg
		next.Config, next.Secret, next.Version, next.UpdatedAt = []byte(`{"url":"https://hooks.example/v2"}`), "whsec_bmV3", 2, at(time.Minute)
		inTx(t, s, func(tx store.Tx) error { return tx.UpdateTarget(ctx, &next, 1) })
		sameTarget(t, "GetTarget after update", s, next)
		stale := next
		stale.Version = 2
		if err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.UpdateTarget(ctx, &stale, 1) }); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateTarget over a stale version: %v; want ErrConflict", err)
		}
		missing := next
		missing.Name = "nothing"
		if err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.UpdateTarget(ctx, &missing, 1) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdateTarget of a missing target: %v; want ErrNotFound", err)
		}

		mine, err := s.ListTargets(ctx, "acme")
		if err != nil || len(mine) != 1 || mine[0].Name != "orders" || mine[0].TenantID != "acme" {
			t.Errorf("ListTargets(acme) = %+v, %v; want acme's orders alone", mine, err)
		}
		all, err := s.ListTargets(ctx, "")
		if err != nil || len(all) != 2 || all[0].TenantID != "acme" || all[1].TenantID != "beta" {
			t.Errorf("ListTargets of every tenant = %+v, %v; want acme's, then beta's", all, err)
		}

		inTx(t, s, func(tx store.Tx) error { return tx.DeleteTarget(ctx, "acme", "orders") })
		if _, err := s.GetTarget(ctx, "acme", "orders"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTarget after delete: %v; want ErrNotFound", err)
		}
		if err := store.InTx(ctx, s, func(tx store.Tx) error { return tx.DeleteTarget(ctx, "acme", "orders") }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteTarget twice: %v; want ErrNotFound", err)
		}
		sameTarget(t, "GetTarget of the other tenant's after delete", s, theirs)
	})

	t.Run("TargetSchedulesCounted", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		queue := record.TargetQueue("orders")
		for i, c := range []struct {
			tenant, queue string
			state         record.ScheduleState
		}{
			{"acme", queue, record.ScheduleActive},
			{"acme", queue, record.SchedulePaused},
			{"acme", queue, record.ScheduleCanceled},  // no longer names it
			{"acme", queue, record.ScheduleCompleted}, // nor this one
			{"acme", "jobs", record.ScheduleActive},   // the built-in queue
			{"beta", queue, record.ScheduleActive},    // another tenant's target
		} {
			sc := NewSchedule(c.tenant, fmt.Sprintf("sch_target%d", i))
			sc.Queue, sc.State, sc.IdempotencyKey = c.queue, c.state, ""
			if c.state != record.ScheduleActive {
				sc.NextRunAt = time.Time{}
			}
			if err := s.InsertSchedule(ctx, sc); err != nil {
				t.Fatalf("InsertSchedule %d: %v", i, err)
			}
		}
		var n int64
		inTx(t, s, func(tx store.Tx) (err error) { n, err = tx.CountQueueSchedules(ctx, "acme", queue); return err })
		if n != 2 {
			t.Errorf("CountQueueSchedules(acme, %s) = %d; want 2 (the ACTIVE and the PAUSED one)", queue, n)
		}
		inTx(t, s, func(tx store.Tx) (err error) { n, err = tx.CountQueueWaiting(ctx, "acme", queue); return err })
		if n != 0 {
			t.Errorf("CountQueueWaiting(acme, %s) with no occurrences = %d; want 0", queue, n)
		}
	})
}

func sameTarget(t *testing.T, what string, s Store, want record.Target) {
	t.Helper()
	got, err := s.GetTarget(t.Context(), want.TenantID, want.Name)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("%s = %+v; want %+v", what, *got, want)
	}
}
