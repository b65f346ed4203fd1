package engine

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// TestCreateBatchConcurrent: batches racing for the same names and keys,
// on every store, each decide every item: every name is created once,
// the losers of a name get ErrConflict and a replayed key its schedule,
// and no batch fails as a whole (on PostgreSQL the unique index refuses a
// racing insert and the batch is decided again from a fresh read).
func TestCreateBatchConcurrent(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		h := open(t, utc("2097-03-01T00:00:00Z"), nil)
		const batches, names = 4, 200
		outs := make([][]BatchOutcome, batches)
		var wg sync.WaitGroup
		for b := range batches {
			items := make([]BatchItem, names)
			for i := range items {
				// Every batch has every name: half keyed alike (replays of
				// one create), half without a key (plain conflicts).
				key := ""
				if i%2 == 0 {
					key = fmt.Sprintf("k-%d", i)
				}
				items[i] = BatchItem{IdempotencyKey: key, Settings: cronIn(fmt.Sprintf("n-%03d", i), "0 9 * * *", "Europe/Berlin")}
			}
			wg.Go(func() {
				out, err := h.e.Control.CreateBatch(h.ctx, tenant, items)
				if err != nil {
					t.Errorf("batch %d: %v", b, err)
				}
				outs[b] = out
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		for i := range names {
			created, ids := 0, map[string]bool{}
			for b := range batches {
				o := outs[b][i]
				switch {
				case o.Created:
					created++
					ids[o.Schedule.ScheduleID] = true
				case o.Err == nil:
					ids[o.Schedule.ScheduleID] = true // a replay of the key
				case !errors.Is(o.Err, ErrConflict) || i%2 == 0:
					t.Errorf("name %d, batch %d: %v; want a conflict only for an item without a key", i, b, o.Err)
				}
			}
			if created != 1 || len(ids) != 1 {
				t.Errorf("name %d: created %d times, answered with %d schedules; want one", i, created, len(ids))
			}
		}
		got, err := h.st.ListSchedules(h.ctx, store.ListSchedulesParams{TenantID: tenant, Limit: store.MaxListLimit})
		if err != nil || len(got) != names {
			t.Fatalf("stored: %d schedules (%v), want %d", len(got), err, names)
		}
	})
}

// TestCreateBatchRefusesTooMany: a batch over MaxBatch is refused whole.
func TestCreateBatchRefusesTooMany(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2097-03-01T00:00:00Z"), nil)
	items := make([]BatchItem, MaxBatch+1)
	for i := range items {
		items[i] = BatchItem{Settings: cronIn(fmt.Sprintf("n-%d", i), "0 9 * * *", "UTC")}
	}
	var ve *schedule.ValidationError
	if _, err := h.e.Control.CreateBatch(h.ctx, tenant, items); !errors.As(err, &ve) || ve.Field != "items" {
		t.Fatalf("a batch of %d: %v, want a validation error of items", len(items), err)
	}
}

// TestCreateBatchAudit: on every store, a bulk create records one audit
// entry for all the schedules it made, its target the range of their ids,
// and each schedule's own audit finds that entry: batches racing for the
// same names (some decided again after a lost race) each name exactly the
// schedules they created, and a batch that made one schedule records it
// as a single create does.
func TestCreateBatchAudit(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		h := open(t, utc("2097-03-01T00:00:00Z"), nil)
		// Each batch has 100 of 150 names, shifted: the later ones find
		// some taken, in their middle and at their ends.
		const batches, items, names = 3, 100, 150
		outs := make([][]BatchOutcome, batches)
		var wg sync.WaitGroup
		for b := range batches {
			items := make([]BatchItem, items)
			for i := range items {
				items[i] = BatchItem{Settings: cronIn(fmt.Sprintf("n-%03d", (i+b*37)%names), "0 9 * * *", "UTC")}
			}
			wg.Go(func() {
				out, err := h.e.Control.CreateBatch(h.ctx, tenant, items)
				if err != nil {
					t.Errorf("batch %d: %v", b, err)
				}
				outs[b] = out
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		creator := map[string]string{} // schedule id -> the range of its batch's entry
		for _, out := range outs {
			var made []string
			for _, o := range out {
				if o.Created {
					made = append(made, o.Schedule.ScheduleID)
				}
			}
			if len(made) < 2 {
				continue // none, or one recorded as a single create
			}
			for _, id := range made {
				creator[id] = record.ScheduleIDRange(made[0], made[len(made)-1])
			}
		}
		stored, err := h.st.ListSchedules(h.ctx, store.ListSchedulesParams{TenantID: tenant, Limit: store.MaxListLimit})
		if err != nil || len(stored) != names {
			t.Fatalf("stored: %d schedules (%v), want %d", len(stored), err, names)
		}
		for _, sc := range stored {
			rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant, Schedule: sc.ScheduleID})
			if err != nil {
				t.Fatal(err)
			}
			want := creator[sc.ScheduleID]
			switch {
			case len(rows) != 1:
				t.Errorf("%s: %d audit rows, want its creation alone: %+v", sc.Name, len(rows), rows)
			case want == "" && (rows[0].Action != AuditScheduleCreate || rows[0].Target != sc.ScheduleID):
				t.Errorf("%s, made alone by its batch: %+v, want a %s of it", sc.Name, rows[0], AuditScheduleCreate)
			case want != "" && (rows[0].Action != AuditScheduleCreateBatch || rows[0].Target != want || rows[0].TenantID != tenant):
				t.Errorf("%s: %+v, want the %s entry of %s", sc.Name, rows[0], AuditScheduleCreateBatch, want)
			}
		}
		// Across tenants (an admin's view), by id: the same entry.
		rows, err := h.e.Audit.List(h.ctx, AuditQuery{Schedule: stored[0].ScheduleID})
		if err != nil || len(rows) != 1 {
			t.Errorf("every tenant's audit of %s: %+v, %v; want its creation", stored[0].ScheduleID, rows, err)
		}
	})
}
