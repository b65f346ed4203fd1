package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// testAudit pins the audit log's rows (store.AuditStore, store.AuditTx):
// an append commits or rolls back with its transaction, every field comes
// back as written, reads select by tenant, target, time and id in id
// order, and a purge deletes only rows older than its bound, in bounded
// batches, without an id ever being given again.
func testAudit(t *testing.T, open func(t *testing.T) Store) {
	entry := func(tenant, action, target string, d time.Duration, oldV, newV int64) store.AuditEntry {
		return store.AuditEntry{At: at(d), TenantID: tenant, ActorTenant: "default", ActorToken: "ci",
			Action: action, Target: target, OldVersion: oldV, NewVersion: newV, Detail: "note " + action}
	}
	list := func(t *testing.T, s Store, p store.ListAuditParams) []store.AuditEntry {
		t.Helper()
		got, err := s.ListAudit(t.Context(), p)
		if err != nil {
			t.Fatalf("ListAudit(%+v): %v", p, err)
		}
		return got
	}
	actions := func(es []store.AuditEntry) string {
		s := ""
		for _, e := range es {
			s += fmt.Sprintf("[%s %s]", e.Action, e.Target)
		}
		return s
	}

	t.Run("AppendList", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		a := entry("tenant-a", "schedule.create", "sch_a", 0, 0, 1)
		a.ActorToken, a.ActorAdmin, a.ActorLocal = "", true, true
		b := entry("tenant-b", "schedule.pause", "sch_b", time.Minute, 1, 2)
		c := entry("tenant-a", "schedule.update", "sch_a", 2*time.Minute, 1, 2)
		c.ActorAdmin = true
		inTx(t, s, func(tx store.Tx) error {
			for _, e := range []store.AuditEntry{a, b, c} {
				if err := tx.AppendAudit(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		all := list(t, s, store.ListAuditParams{})
		if len(all) != 3 {
			t.Fatalf("ListAudit(all) = %s; want 3 rows", actions(all))
		}
		for i, want := range []store.AuditEntry{a, b, c} {
			got := all[i]
			if i > 0 && got.ID <= all[i-1].ID {
				t.Errorf("row %d: id %d not above %d", i, got.ID, all[i-1].ID)
			}
			want.ID = got.ID
			if !got.At.Equal(want.At) {
				t.Errorf("row %d: at %v, want %v", i, got.At, want.At)
			}
			got.At = want.At
			if got != want {
				t.Errorf("row %d\n got %+v\nwant %+v", i, got, want)
			}
		}
		for _, tc := range []struct {
			name string
			p    store.ListAuditParams
			want string
		}{
			{"tenant", store.ListAuditParams{TenantID: "tenant-a"}, "[schedule.create sch_a][schedule.update sch_a]"},
			{"target", store.ListAuditParams{Target: "sch_b"}, "[schedule.pause sch_b]"},
			{"tenant and target", store.ListAuditParams{TenantID: "tenant-b", Target: "sch_a"}, ""},
			{"since", store.ListAuditParams{Since: at(time.Minute)}, "[schedule.pause sch_b][schedule.update sch_a]"},
			{"after", store.ListAuditParams{AfterID: all[0].ID, Limit: 1}, "[schedule.pause sch_b]"},
			{"limit", store.ListAuditParams{Limit: 2}, "[schedule.create sch_a][schedule.pause sch_b]"},
			{"nobody", store.ListAuditParams{TenantID: "nobody"}, ""},
		} {
			if got := actions(list(t, s, tc.p)); got != tc.want {
				t.Errorf("%s: ListAudit = %s; want %s", tc.name, got, tc.want)
			}
		}
	})

	// Since seeks into the log, and a row stamped earlier than one appended
	// before it (less than store.AuditClockSlack earlier) is still found:
	// sch_c's update at 2h+1m is appended before sch_b's at 2h+30s.
	t.Run("ListSince", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		rows := []store.AuditEntry{
			entry("tenant-a", "schedule.create", "sch_a", 0, 0, 1),
			entry("tenant-b", "schedule.create", "sch_b", time.Hour, 0, 1),
			entry("tenant-a", "schedule.update", "sch_a", 2*time.Hour, 1, 2),
			entry("tenant-a", "schedule.update", "sch_c", 2*time.Hour+time.Minute, 1, 2),
			entry("tenant-b", "schedule.update", "sch_b", 2*time.Hour+30*time.Second, 1, 2),
			entry("tenant-a", "schedule.pause", "sch_a", 3*time.Hour, 2, 3),
		}
		inTx(t, s, func(tx store.Tx) error {
			for _, e := range rows {
				if err := tx.AppendAudit(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		all := list(t, s, store.ListAuditParams{})
		if len(all) != len(rows) {
			t.Fatalf("ListAudit(all) = %s; want %d rows", actions(all), len(rows))
		}
		since := at(2*time.Hour + 30*time.Second)
		for _, tc := range []struct {
			name string
			p    store.ListAuditParams
			want string
		}{
			{"since", store.ListAuditParams{Since: since}, "[schedule.update sch_c][schedule.update sch_b][schedule.pause sch_a]"},
			{"since, a page", store.ListAuditParams{Since: since, Limit: 1}, "[schedule.update sch_c]"},
			{"since, the next page", store.ListAuditParams{Since: since, AfterID: all[3].ID, Limit: 1}, "[schedule.update sch_b]"},
			{"since, after a row before it", store.ListAuditParams{Since: since, AfterID: all[1].ID}, "[schedule.update sch_c][schedule.update sch_b][schedule.pause sch_a]"},
			{"since and tenant", store.ListAuditParams{Since: since, TenantID: "tenant-a"}, "[schedule.update sch_c][schedule.pause sch_a]"},
			{"since and tenant, the next page", store.ListAuditParams{Since: since, TenantID: "tenant-a", AfterID: all[3].ID}, "[schedule.pause sch_a]"},
			{"since and target", store.ListAuditParams{Since: since, Target: "sch_b"}, "[schedule.update sch_b]"},
			{"since and target of a tenant", store.ListAuditParams{Since: at(time.Hour), Target: "sch_a", TenantID: "tenant-a"}, "[schedule.update sch_a][schedule.pause sch_a]"},
			{"since and target of another tenant", store.ListAuditParams{Target: "sch_a", TenantID: "tenant-b"}, ""},
			{"since, at a row", store.ListAuditParams{Since: at(time.Hour)}, "[schedule.create sch_b][schedule.update sch_a][schedule.update sch_c][schedule.update sch_b][schedule.pause sch_a]"},
			{"since before every row", store.ListAuditParams{Since: at(-time.Hour), Limit: 2}, "[schedule.create sch_a][schedule.create sch_b]"},
			{"since after every row", store.ListAuditParams{Since: at(4 * time.Hour)}, ""},
			{"target, pages", store.ListAuditParams{Target: "sch_a", AfterID: all[0].ID, Limit: 1}, "[schedule.update sch_a]"},
			{"tenant, pages", store.ListAuditParams{TenantID: "tenant-b", AfterID: all[1].ID}, "[schedule.update sch_b]"},
		} {
			if got := actions(list(t, s, tc.p)); got != tc.want {
				t.Errorf("%s: ListAudit = %s; want %s", tc.name, got, tc.want)
			}
		}
	})

	// ListAuditTargets reads one action's rows by a range of targets, in
	// byte order, both ends included, of one tenant or all, in id order.
	t.Run("TargetRange", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		rows := []store.AuditEntry{
			entry("tenant-a", "schedule.create_batch", "sch_b..sch_d", 0, 0, 1),
			entry("tenant-a", "schedule.create_batch", "sch_a..sch_b", time.Second, 0, 1),
			entry("tenant-a", "schedule.create", "sch_b", time.Second, 0, 1),
			entry("tenant-b", "schedule.create_batch", "sch_b..sch_c", 2*time.Second, 0, 1),
			entry("tenant-a", "schedule.create_batch", "sch_c..sch_e", 3*time.Second, 0, 1),
			entry("tenant-a", "schedule.create_batch", "sch_b", 4*time.Second, 0, 1),
		}
		inTx(t, s, func(tx store.Tx) error {
			for _, e := range rows {
				if err := tx.AppendAudit(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		for _, tc := range []struct {
			name string
			p    store.AuditTargetRange
			want string
		}{
			{"a range", store.AuditTargetRange{Action: "schedule.create_batch", From: "sch_b", To: "sch_b..~"},
				"[schedule.create_batch sch_b..sch_d][schedule.create_batch sch_b..sch_c][schedule.create_batch sch_b]"},
			{"of a tenant", store.AuditTargetRange{TenantID: "tenant-a", Action: "schedule.create_batch", From: "sch_a", To: "sch_b..~"},
				"[schedule.create_batch sch_b..sch_d][schedule.create_batch sch_a..sch_b][schedule.create_batch sch_b]"},
			{"both ends", store.AuditTargetRange{Action: "schedule.create_batch", From: "sch_a..sch_b", To: "sch_b..sch_c"},
				"[schedule.create_batch sch_a..sch_b][schedule.create_batch sch_b..sch_c][schedule.create_batch sch_b]"},
			{"limit", store.AuditTargetRange{Action: "schedule.create_batch", From: "sch_a", To: "sch_z", Limit: 2},
				"[schedule.create_batch sch_b..sch_d][schedule.create_batch sch_a..sch_b]"},
			{"another action", store.AuditTargetRange{Action: "schedule.create", From: "sch_a", To: "sch_z"}, "[schedule.create sch_b]"},
			{"nothing", store.AuditTargetRange{Action: "schedule.create_batch", From: "sch_f", To: "sch_z"}, ""},
		} {
			got, err := s.ListAuditTargets(ctx, tc.p)
			if err != nil {
				t.Fatalf("%s: ListAuditTargets: %v", tc.name, err)
			}
			if actions(got) != tc.want {
				t.Errorf("%s: ListAuditTargets = %s; want %s", tc.name, actions(got), tc.want)
			}
		}
	})

	t.Run("RollbackWritesNothing", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		boom := errors.New("the change failed")
		err := store.InTx(ctx, s, func(tx store.Tx) error {
			if err := tx.AppendAudit(ctx, entry("tenant-a", "schedule.update", "sch_a", 0, 1, 2)); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx: %v; want the change's error", err)
		}
		if got := list(t, s, store.ListAuditParams{}); len(got) != 0 {
			t.Errorf("after a rollback ListAudit = %s; want nothing", actions(got))
		}
	})

	t.Run("Purge", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		inTx(t, s, func(tx store.Tx) error {
			for i := range 4 {
				if err := tx.AppendAudit(ctx, entry("tenant-a", "schedule.update", fmt.Sprintf("sch_%d", i), time.Duration(i)*time.Minute, 1, 2)); err != nil {
					return err
				}
			}
			return nil
		})
		last := list(t, s, store.ListAuditParams{})[3].ID
		for i, want := range []int{1, 1, 0} {
			n, err := s.PurgeAudit(ctx, at(2*time.Minute), 1+i*10)
			if err != nil || n != want {
				t.Fatalf("PurgeAudit #%d = %d, %v; want %d", i, n, err, want)
			}
		}
		if got := actions(list(t, s, store.ListAuditParams{})); got != "[schedule.update sch_2][schedule.update sch_3]" {
			t.Errorf("after purging rows before 2m: %s; want sch_2, sch_3", got)
		}
		if n, err := s.PurgeAudit(ctx, at(time.Hour), 0); err != nil || n != 0 {
			t.Errorf("PurgeAudit with limit 0 = %d, %v; want 0, nil", n, err)
		}
		// Every row purged, the next id is still a new one.
		if n, err := s.PurgeAudit(ctx, at(time.Hour), 10); err != nil || n != 2 {
			t.Fatalf("PurgeAudit(all) = %d, %v; want 2", n, err)
		}
		inTx(t, s, func(tx store.Tx) error {
			return tx.AppendAudit(ctx, entry("tenant-a", "tenant.update", "tenant-a", time.Hour, 1, 2))
		})
		if got := list(t, s, store.ListAuditParams{}); len(got) != 1 || got[0].ID <= last {
			t.Errorf("after purging all, a new row = %+v; want one with an id above %d", got, last)
		}
	})

	t.Run("ManualTx", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		boom := errors.New("the audit row failed")
		sc := NewSchedule("tenant-a", "sch_manual_tx")
		mustInsertSchedule(t, s, sc)
		manual := NewOccurrence(sc, at(time.Minute))
		manual.TriggerKey, manual.OccurrenceID = "key-1", record.ManualOccurrenceID(sc.ScheduleID, "key-1")
		insert := func(fail bool) (int, error) {
			var n int
			err := store.InTx(ctx, s, func(tx store.Tx) (err error) {
				if n, err = tx.InsertOccurrences(ctx, []record.Occurrence{manual}); err != nil || !fail {
					return err
				}
				return boom
			})
			return n, err
		}
		if _, err := insert(true); !errors.Is(err, boom) {
			t.Fatalf("InsertOccurrences then a failure: %v", err)
		}
		if occs, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: sc.ScheduleID}); err != nil || len(occs) != 0 {
			t.Errorf("after a rollback: %d occurrences, %v; want none", len(occs), err)
		}
		for i, want := range []int{1, 0} {
			if n, err := insert(false); err != nil || n != want {
				t.Errorf("InsertOccurrences #%d = %d, %v; want %d", i, n, err, want)
			}
		}
		orphan := NewOccurrence(NewSchedule("tenant-a", "sch_nobody"), at(time.Minute))
		err := store.InTx(ctx, s, func(tx store.Tx) error { _, err := tx.InsertOccurrences(ctx, []record.Occurrence{orphan}); return err })
		wantErr(t, "InsertOccurrences of no schedule", err, store.ErrNotFound)

		out := store.Outage{StartedAt: at(0), EndsAt: at(time.Hour), CreatedBy: "node-a"}
		err = store.InTx(ctx, s, func(tx store.Tx) error {
			if _, err := tx.InsertOutage(ctx, out); err != nil {
				return err
			}
			return boom
		})
		if cur, cerr := s.CurrentOutage(ctx, at(time.Second)); !errors.Is(err, boom) || cerr != nil || cur != nil {
			t.Errorf("InsertOutage then a failure: %v; current %+v, %v; want none", err, cur, cerr)
		}
		var id int64
		inTx(t, s, func(tx store.Tx) (err error) { id, err = tx.InsertOutage(ctx, out); return err })
		err = store.InTx(ctx, s, func(tx store.Tx) error { _, err := tx.InsertOutage(ctx, out); return err })
		wantErr(t, "a second InsertOutage", err, store.ErrConflict)
		var canceled []store.Outage
		inTx(t, s, func(tx store.Tx) (err error) { canceled, err = tx.CancelOutages(ctx, at(time.Minute)); return err })
		if len(canceled) != 1 || canceled[0].ID != id || !canceled[0].CanceledAt.Equal(at(time.Minute)) {
			t.Errorf("CancelOutages = %+v; want outage %d canceled at 1m", canceled, id)
		}
		if cur, err := s.CurrentOutage(ctx, at(2*time.Minute)); err != nil || cur != nil {
			t.Errorf("after the cancel: current %+v, %v; want none", cur, err)
		}
	})
}
