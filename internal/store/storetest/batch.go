package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testBatch pins the statements of a bulk create (store.BatchTx): the
// multi-row inserts store every row as the one-row statements do, past
// any one statement's limit on bound values; the read finds live names
// and keys of one tenant only; a taken name or key refuses the batch and
// leaves nothing of it.
func testBatch(t *testing.T, open func(t *testing.T) Store) {
	t.Run("InsertMany", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		const n = 1500 // more rows than one SQLite statement may bind
		scs := make([]*record.Schedule, n)
		news := make([]store.NewSchedule, n)
		vs := make([]store.ScheduleVersion, n)
		es := make([]store.AuditEntry, n)
		for i := range scs {
			scs[i] = NewSchedule("tenant-a", fmt.Sprintf("sch_batch_%04d", i))
			scs[i].MissedCount = 0
			if i%3 == 0 {
				scs[i].IdempotencyKey = "" // no key
			}
			// Most first versions as a create writes them, some written
			// at another time (a store keeps those apart).
			vs[i] = store.NewScheduleVersion(scs[i], scs[i].CreatedAt, at(0))
			if i%5 == 0 {
				vs[i].WrittenAt = at(time.Minute)
			}
			news[i] = store.NewSchedule{Schedule: scs[i], First: vs[i]}
			es[i] = store.AuditEntry{At: at(0), TenantID: "tenant-a", ActorTenant: "tenant-a", Action: "schedule.create",
				Target: scs[i].ScheduleID, NewVersion: 1, Detail: "batch"}
		}
		inTx(t, s, func(tx store.Tx) error {
			if err := tx.InsertSchedules(ctx, news); err != nil {
				return err
			}
			return tx.AppendAudits(ctx, es)
		})
		for _, i := range []int{0, 1, 1169, 1170, n - 1} {
			assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", scs[i].ScheduleID), scs[i])
		}
		var live int64
		inTx(t, s, func(tx store.Tx) (err error) { live, err = tx.LiveSchedules(ctx, "tenant-a"); return err })
		if live != n {
			t.Errorf("live schedules after the batch: %d, want %d", live, n)
		}
		var versions []store.ScheduleVersion
		var audits int
		for p := (store.ListScheduleVersionsParams{TenantID: "tenant-a", Limit: store.MaxListLimit}); ; {
			page, err := s.ListScheduleVersions(ctx, p)
			if err != nil {
				t.Fatalf("ListScheduleVersions: %v", err)
			}
			versions = append(versions, page...)
			if len(page) < p.Limit {
				break
			}
			p.AfterScheduleID, p.AfterVersion = page[len(page)-1].ScheduleID, page[len(page)-1].Version
		}
		if !reflect.DeepEqual(versions, vs) {
			t.Errorf("version rows after the batch: %d, want %d as written", len(versions), len(vs))
		}
		for p := (store.ListAuditParams{TenantID: "tenant-a", Limit: store.MaxListLimit}); ; {
			page, err := s.ListAudit(ctx, p)
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			audits += len(page)
			if len(page) < p.Limit {
				break
			}
			p.AfterID = page[len(page)-1].ID
		}
		if audits != n {
			t.Errorf("after the batch: %d audit rows; want %d", audits, n)
		}
	})

	t.Run("NamesOrKeys", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		live := NewSchedule("tenant-a", "sch_nk_live")
		canceled := NewSchedule("tenant-a", "sch_nk_canceled")
		canceled.State, canceled.NextRunAt = record.ScheduleCanceled, time.Time{}
		other := NewSchedule("tenant-b", "sch_nk_other")
		other.Name, other.IdempotencyKey = live.Name, live.IdempotencyKey
		for _, sc := range []*record.Schedule{live, canceled, other} {
			mustInsertSchedule(t, s, sc)
		}
		cases := []struct {
			name        string
			names, keys []string
			want        []string // schedule ids
		}{
			{"nothing asked", nil, nil, nil},
			{"a live name", []string{live.Name, "no such"}, nil, []string{live.ScheduleID}},
			{"a canceled schedule's name is free", []string{canceled.Name}, nil, nil},
			{"a canceled schedule's key is not", nil, []string{canceled.IdempotencyKey}, []string{canceled.ScheduleID}},
			{"name and key of one schedule: once", []string{live.Name}, []string{live.IdempotencyKey}, []string{live.ScheduleID}},
			{"both", []string{live.Name}, []string{canceled.IdempotencyKey, "nokey"}, []string{canceled.ScheduleID, live.ScheduleID}},
		}
		for _, c := range cases {
			var got []record.Schedule
			inTx(t, s, func(tx store.Tx) (err error) {
				got, err = tx.SchedulesByNamesOrKeys(ctx, "tenant-a", c.names, c.keys)
				return err
			})
			var ids []string
			for _, sc := range got {
				if sc.TenantID != "tenant-a" {
					t.Errorf("%s: found %s of tenant %s", c.name, sc.ScheduleID, sc.TenantID)
				}
				ids = append(ids, sc.ScheduleID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, c.want) {
				t.Errorf("%s: found %v, want %v", c.name, ids, c.want)
			}
		}
		var got []record.Schedule
		inTx(t, s, func(tx store.Tx) (err error) {
			got, err = tx.SchedulesByNamesOrKeys(ctx, "tenant-a", nil, []string{live.IdempotencyKey})
			return err
		})
		if len(got) != 1 {
			t.Fatalf("by key: %d schedules, want 1", len(got))
		}
		assertScheduleEqual(t, &got[0], live)
	})

	t.Run("TakenRefusesAll", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		first := NewSchedule("tenant-a", "sch_taken_1")
		mustInsertSchedule(t, s, first)
		for _, c := range []struct {
			name  string
			clash func(sc *record.Schedule)
		}{
			{"name", func(sc *record.Schedule) { sc.Name = first.Name }},
			{"key", func(sc *record.Schedule) { sc.IdempotencyKey = first.IdempotencyKey }},
		} {
			fresh := NewSchedule("tenant-a", "sch_taken_fresh_"+c.name)
			clash := NewSchedule("tenant-a", "sch_taken_clash_"+c.name)
			c.clash(clash)
			err := store.InTx(ctx, s, func(tx store.Tx) error {
				return tx.InsertSchedules(ctx, []store.NewSchedule{
					{Schedule: fresh, First: store.NewScheduleVersion(fresh, fresh.CreatedAt, at(0))},
					{Schedule: clash, First: store.NewScheduleVersion(clash, clash.CreatedAt, at(0))}})
			})
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("a batch with a taken %s: %v, want ErrConflict", c.name, err)
			}
			if _, err := s.GetSchedule(ctx, "tenant-a", fresh.ScheduleID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the refused batch's other schedule: %v, want ErrNotFound", err)
			}
		}
	})
}
