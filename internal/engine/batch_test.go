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

// TestCreateBatchAnswersAsRead: on every store, a batch is answered as
// if the names and keys taken had been read first, whether or not its
// first try read them: a key used before answers exists ahead of a full
// quota and of a name taken in the batch, a canceled schedule's name is
// free but its key is not, and a whole batch sent again answers exists
// for every item, writing nothing.
func TestCreateBatchAnswersAsRead(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		h := open(t, utc("2097-03-01T00:00:00Z"), func(c *Config) { c.TenantDefaults.ActiveSchedules = 3 })
		kept, _, err := h.e.Control.Create(h.ctx, tenant, "k-kept", cronIn("kept", "0 9 * * *", "UTC"))
		if err != nil {
			t.Fatal(err)
		}
		gone, _, err := h.e.Control.Create(h.ctx, tenant, "k-gone", cronIn("gone", "0 9 * * *", "UTC"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.e.Control.Cancel(h.ctx, tenant, gone.ScheduleID); err != nil {
			t.Fatal(err)
		}
		// One live schedule of a quota of 3: room for two.
		items := []BatchItem{
			{Settings: cronIn("a", "0 9 * * *", "UTC")},                               // created
			{IdempotencyKey: "k-kept", Settings: cronIn("kept", "0 9 * * *", "UTC")},  // exists
			{Settings: cronIn("gone", "0 9 * * *", "UTC")},                            // created: the name is free again
			{IdempotencyKey: "k-gone", Settings: cronIn("other", "0 9 * * *", "UTC")}, // conflict: the key is not
			{Settings: cronIn("b", "0 9 * * *", "UTC")},                               // quota
			{IdempotencyKey: "k-kept", Settings: cronIn("kept", "0 9 * * *", "UTC")},  // exists, past the quota
		}
		out, err := h.e.Control.CreateBatch(h.ctx, tenant, items)
		if err != nil {
			t.Fatal(err)
		}
		var qe *QuotaError
		switch {
		case !out[0].Created || !out[2].Created:
			t.Errorf("a, gone: %+v, %+v; want both created", out[0], out[2])
		case out[1].Created || out[1].Err != nil || out[1].Schedule.ScheduleID != kept.ScheduleID:
			t.Errorf("k-kept: %+v; want exists, %s", out[1], kept.ScheduleID)
		case !errors.Is(out[3].Err, ErrConflict):
			t.Errorf("k-gone: %+v; want a conflict", out[3])
		case !errors.As(out[4].Err, &qe):
			t.Errorf("b: %+v; want the quota", out[4])
		case out[5].Created || out[5].Err != nil || out[5].Schedule.ScheduleID != kept.ScheduleID:
			t.Errorf("k-kept again, past the quota: %+v; want exists, %s", out[5], kept.ScheduleID)
		}

		// The quota full: a key used before still answers exists (had its
		// item been refused for the quota without the read, the insert of
		// the rest would have found no taken key to refuse it).
		out, err = h.e.Control.CreateBatch(h.ctx, tenant, []BatchItem{items[1], {Settings: cronIn("c", "0 9 * * *", "UTC")}})
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Created || out[0].Err != nil || out[0].Schedule.ScheduleID != kept.ScheduleID || !errors.As(out[1].Err, &qe) {
			t.Errorf("quota full: %+v, %+v; want exists (%s), then the quota", out[0], out[1], kept.ScheduleID)
		}

		// A batch of new keyed schedules, then the same again.
		fresh := make([]BatchItem, 50)
		for i := range fresh {
			fresh[i] = BatchItem{IdempotencyKey: fmt.Sprintf("f-%d", i), Settings: cronIn(fmt.Sprintf("f-%d", i), "0 9 * * *", "UTC")}
		}
		h2 := open(t, utc("2097-03-01T00:00:00Z"), nil)
		first, err := h2.e.Control.CreateBatch(h2.ctx, tenant, fresh)
		if err != nil {
			t.Fatal(err)
		}
		again, err := h2.e.Control.CreateBatch(h2.ctx, tenant, fresh)
		if err != nil {
			t.Fatal(err)
		}
		for i := range fresh {
			if !first[i].Created || again[i].Created || again[i].Err != nil || again[i].Schedule.ScheduleID != first[i].Schedule.ScheduleID {
				t.Fatalf("item %d: %+v, then %+v; want created, then exists", i, first[i], again[i])
			}
		}
		rows, err := h2.e.Audit.List(h2.ctx, AuditQuery{TenantID: tenant})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Action != AuditScheduleCreateBatch {
			t.Errorf("audit after a batch and its replay: %+v; want the batch's entry alone", rows)
		}
	})
}
