package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

func testPlanner(t *testing.T, open func(t *testing.T) Store) {
	t.Run("InitShards", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		for _, tc := range []struct{ ask, want int }{{64, 64}, {64, 64}, {128, 64}, {1, 64}} {
			got, err := s.InitShards(ctx, tc.ask)
			if err != nil || got != tc.want {
				t.Errorf("InitShards(%d) = %d, %v; want %d (the first call's)", tc.ask, got, err, tc.want)
			}
		}
		for _, bad := range []int{0, -1} {
			if _, err := s.InitShards(ctx, bad); err == nil {
				t.Errorf("InitShards(%d): no error", bad)
			}
		}
	})

	t.Run("ShardLeases", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		const ttl = 10 * time.Second
		acquire := func(shard int, owner string, now time.Time) (store.ShardLease, error) {
			t.Helper()
			return s.AcquireShard(ctx, store.AcquireShardParams{Shard: shard, Owner: owner, TTL: ttl, Now: now})
		}
		// Each step runs in order on the same shard; want is the lease
		// after it, or the error.
		var held store.ShardLease
		for _, tc := range []struct {
			what  string
			do    func() (store.ShardLease, error)
			owner string
			epoch int64
			until time.Time
			err   error
		}{
			{"free shard", func() (store.ShardLease, error) { return acquire(3, "node-a", at(0)) }, "node-a", 1, at(ttl), nil},
			{"renewal by acquire", func() (store.ShardLease, error) { return acquire(3, "node-a", at(4*time.Second)) }, "node-a", 1, at(4*time.Second + ttl), nil},
			{"live lease of another owner", func() (store.ShardLease, error) { return acquire(3, "node-b", at(13*time.Second)) }, "", 0, time.Time{}, store.ErrConflict},
			{"renew", func() (store.ShardLease, error) { return s.RenewShard(ctx, held, ttl, at(13*time.Second)) }, "node-a", 1, at(23 * time.Second), nil},
			{"renew a stale epoch", func() (store.ShardLease, error) {
				old := held
				old.Epoch--
				return s.RenewShard(ctx, old, ttl, at(14*time.Second))
			}, "", 0, time.Time{}, store.ErrStaleEpoch},
			{"renew as another owner", func() (store.ShardLease, error) {
				other := held
				other.Owner = "node-b"
				return s.RenewShard(ctx, other, ttl, at(14*time.Second))
			}, "", 0, time.Time{}, store.ErrStaleEpoch},
			{"renew at the expiry instant", func() (store.ShardLease, error) { return s.RenewShard(ctx, held, ttl, at(23*time.Second)) }, "", 0, time.Time{}, store.ErrStaleEpoch},
			{"steal at the expiry instant", func() (store.ShardLease, error) { return acquire(3, "node-b", at(23*time.Second)) }, "node-b", 2, at(33 * time.Second), nil},
			{"the old owner's renewal", func() (store.ShardLease, error) {
				return s.RenewShard(ctx, store.ShardLease{Shard: 3, Owner: "node-a", Epoch: 1}, ttl, at(24*time.Second))
			}, "", 0, time.Time{}, store.ErrStaleEpoch},
			{"the old owner's acquire", func() (store.ShardLease, error) { return acquire(3, "node-a", at(24*time.Second)) }, "", 0, time.Time{}, store.ErrConflict},
			{"own lease again after it expired", func() (store.ShardLease, error) { return acquire(3, "node-b", at(40*time.Second)) }, "node-b", 3, at(50 * time.Second), nil},
		} {
			got, err := tc.do()
			wantErr(t, tc.what, err, tc.err)
			if tc.err != nil {
				continue
			}
			want := store.ShardLease{Shard: 3, Owner: tc.owner, Epoch: tc.epoch, ExpiresAt: tc.until}
			if got != want {
				t.Errorf("%s: lease %+v, want %+v", tc.what, got, want)
			}
			held = got
		}

		// Releasing a lost lease is not an error and leaves the holder alone.
		if err := s.ReleaseShard(ctx, store.ShardLease{Shard: 3, Owner: "node-a", Epoch: 1}); err != nil {
			t.Errorf("ReleaseShard of a lost lease: %v", err)
		}
		if err := s.ReleaseShard(ctx, store.ShardLease{Shard: 9, Owner: "node-a", Epoch: 1}); err != nil {
			t.Errorf("ReleaseShard of a shard never leased: %v", err)
		}
		if _, err := acquire(3, "node-c", at(41*time.Second)); err == nil {
			t.Error("a lost lease's release freed the holder's shard")
		}
		// Releasing the live lease frees the shard at once; the next owner's
		// epoch grows, and the released lease is stale.
		if err := s.ReleaseShard(ctx, held); err != nil {
			t.Fatalf("ReleaseShard: %v", err)
		}
		got, err := acquire(3, "node-c", at(41*time.Second))
		if err != nil || got.Epoch != 4 || got.Owner != "node-c" {
			t.Errorf("acquire after release: %+v, %v; want node-c at epoch 4", got, err)
		}
		_, err = s.RenewShard(ctx, held, ttl, at(42*time.Second))
		wantErr(t, "renew a released lease", err, store.ErrStaleEpoch)

		// Shards are independent; the list is by shard.
		if _, err := acquire(1, "node-a", at(41*time.Second)); err != nil {
			t.Fatalf("acquire shard 1: %v", err)
		}
		leases, err := s.ListShardLeases(ctx)
		if err != nil {
			t.Fatalf("ListShardLeases: %v", err)
		}
		want := []store.ShardLease{
			{Shard: 1, Owner: "node-a", Epoch: 1, ExpiresAt: at(51 * time.Second)},
			{Shard: 3, Owner: "node-c", Epoch: 4, ExpiresAt: at(51 * time.Second)},
		}
		if fmt.Sprint(leases) != fmt.Sprint(want) {
			t.Errorf("ListShardLeases:\n got %+v\nwant %+v", leases, want)
		}
	})

	t.Run("DueSchedules", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		add := func(id string, shard int, state record.ScheduleState, next time.Time) {
			t.Helper()
			sc := NewSchedule("tenant-a", id)
			sc.Shard, sc.State, sc.NextRunAt = shard, state, next
			mustInsertSchedule(t, s, sc)
		}
		add("sch_c", 1, record.ScheduleActive, at(time.Minute))
		add("sch_a", 1, record.ScheduleActive, at(2*time.Minute))
		add("sch_b", 1, record.ScheduleActive, at(time.Minute)) // ties with sch_c: id order
		add("sch_late", 1, record.ScheduleActive, at(2*time.Minute+time.Millisecond))
		add("sch_paused", 1, record.SchedulePaused, at(0))
		add("sch_canceled", 1, record.ScheduleCanceled, at(0))
		add("sch_done", 1, record.ScheduleCompleted, time.Time{})
		add("sch_nocursor", 1, record.ScheduleActive, time.Time{})
		add("sch_other_shard", 2, record.ScheduleActive, at(0))
		s2 := NewSchedule("tenant-b", "sch_tenant_b")
		s2.Shard, s2.NextRunAt = 1, at(90*time.Second)
		mustInsertSchedule(t, s, s2) // shards span tenants

		for _, tc := range []struct {
			p    store.DueSchedulesParams
			want []string
		}{
			{store.DueSchedulesParams{Shard: 1, Until: at(2 * time.Minute), Limit: 10}, []string{"sch_b", "sch_c", "sch_tenant_b", "sch_a"}},
			{store.DueSchedulesParams{Shard: 1, Until: at(2 * time.Minute), Limit: 2}, []string{"sch_b", "sch_c"}},
			{store.DueSchedulesParams{Shard: 1, Until: at(time.Minute - time.Millisecond), Limit: 10}, []string{}},
			{store.DueSchedulesParams{Shard: 2, Until: at(time.Hour), Limit: 10}, []string{"sch_other_shard"}},
			{store.DueSchedulesParams{Shard: 3, Until: at(time.Hour), Limit: 10}, []string{}},
			// Pages: after a position, in the same order.
			{store.DueSchedulesParams{Shard: 1, Until: at(2 * time.Minute), Limit: 10, AfterRunAt: at(time.Minute), AfterID: "sch_b"},
				[]string{"sch_c", "sch_tenant_b", "sch_a"}},
			{store.DueSchedulesParams{Shard: 1, Until: at(2 * time.Minute), Limit: 2, AfterRunAt: at(time.Minute), AfterID: "sch_c"},
				[]string{"sch_tenant_b", "sch_a"}},
			{store.DueSchedulesParams{Shard: 1, Until: at(2 * time.Minute), Limit: 10, AfterRunAt: at(2 * time.Minute), AfterID: "sch_a"}, []string{}},
			{store.DueSchedulesParams{Shard: 1, Until: at(2 * time.Minute), Limit: 10, AfterRunAt: at(time.Minute), AfterID: "sch_a"},
				[]string{"sch_b", "sch_c", "sch_tenant_b", "sch_a"}},
		} {
			got, err := s.DueSchedules(ctx, tc.p)
			if err != nil {
				t.Fatalf("DueSchedules(%+v): %v", tc.p, err)
			}
			ids := []string{}
			for _, sc := range got {
				ids = append(ids, sc.ScheduleID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
				t.Errorf("DueSchedules(%+v) = %v, want %v", tc.p, ids, tc.want)
			}
		}
		got, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: 2, Until: at(0), Limit: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("DueSchedules: %v, %v", got, err)
		}
		want := NewSchedule("tenant-a", "sch_other_shard")
		want.Shard, want.NextRunAt = 2, at(0)
		// The contract lets DueSchedules leave out what the planner does
		// not read.
		gotPlanner, wantPlanner := got[0].PlannerFields(), want.PlannerFields()
		assertScheduleEqual(t, &gotPlanner, &wantPlanner)
	})

	t.Run("CommitPlan", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 7, "node-a", at(0))
		a := planSchedule(t, s, "tenant-a", "sch_plan_a", 7, at(time.Minute))
		b := planSchedule(t, s, "tenant-b", "sch_plan_b", 7, at(time.Minute))

		now := at(5*time.Second + 250*time.Millisecond) // the lease is live until 10 s
		enq := NewOccurrence(a, at(time.Minute))
		enq.State = record.OccurrenceEnqueued
		missed := NewOccurrence(a, at(-time.Minute))
		missed.State, missed.FinishedAt = record.OccurrenceMissed, now
		sched := NewOccurrence(b, at(time.Minute))
		sched.OverlapPolicy, sched.RetryFrom = "", time.Time{} // stored as allow, and from scheduled_for
		res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: now, Items: []store.PlanItem{
			{TenantID: "tenant-a", ScheduleID: a.ScheduleID, Version: 1, Cursor: at(time.Minute), NextRunAt: at(2 * time.Minute),
				State: record.ScheduleActive, MissedCount: 40, Occurrences: []record.Occurrence{missed, enq}},
			{TenantID: "tenant-b", ScheduleID: b.ScheduleID, Version: 1, Cursor: at(time.Minute),
				State: record.ScheduleCompleted, Occurrences: []record.Occurrence{sched}},
		}})
		if err != nil {
			t.Fatalf("CommitPlan: %v", err)
		}
		if want := (store.PlanResult{Applied: 2, Inserted: 3}); res != want {
			t.Errorf("CommitPlan = %+v, want %+v", res, want)
		}
		gotA := mustGetSchedule(t, s, "tenant-a", a.ScheduleID)
		if !gotA.NextRunAt.Equal(at(2*time.Minute)) || gotA.State != record.ScheduleActive || gotA.MissedCount != a.MissedCount+40 || gotA.Version != 1 {
			t.Errorf("schedule a after the plan: next %v state %s missed %d version %d", gotA.NextRunAt, gotA.State, gotA.MissedCount, gotA.Version)
		}
		if !gotA.UpdatedAt.Equal(a.UpdatedAt) {
			t.Errorf("the planner changed updated_at to %v", gotA.UpdatedAt)
		}
		gotB := mustGetSchedule(t, s, "tenant-b", b.ScheduleID)
		if !gotB.NextRunAt.IsZero() || gotB.State != record.ScheduleCompleted || gotB.MissedCount != b.MissedCount {
			t.Errorf("schedule b after the plan: next %v state %s missed %d", gotB.NextRunAt, gotB.State, gotB.MissedCount)
		}
		// Occurrences are stamped with the lease epoch; ENQUEUED ones with
		// enqueued_at = Now.
		wantEnq := enq
		wantEnq.ShardEpoch, wantEnq.EnqueuedAt = lease.Epoch, now
		assertOccurrence(t, "ENQUEUED occurrence", mustGetOccurrence(t, s, "tenant-a", enq.OccurrenceID), wantEnq)
		wantMissed := missed
		wantMissed.ShardEpoch = lease.Epoch
		assertOccurrence(t, "MISSED occurrence", mustGetOccurrence(t, s, "tenant-a", missed.OccurrenceID), wantMissed)
		wantSched := sched
		wantSched.ShardEpoch, wantSched.OverlapPolicy, wantSched.RetryFrom = lease.Epoch, record.OverlapAllow, sched.ScheduledFor
		assertOccurrence(t, "SCHEDULED occurrence", mustGetOccurrence(t, s, "tenant-b", sched.OccurrenceID), wantSched)
	})

	// The cursor the planner advanced is what reads return, what an update
	// (a pause, say) keeps, and what DueSchedules follows after it, in
	// both directions.
	t.Run("CursorAcrossUpdates", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 3, "node-a", at(0))
		sc := planSchedule(t, s, "tenant-a", "sch_cursor", 3, at(time.Minute))
		if _, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{
			planItem(sc, at(time.Minute), at(2*time.Minute))}}); err != nil {
			t.Fatal(err)
		}
		due := func(want ...string) {
			t.Helper()
			got, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: 3, Until: at(time.Hour), Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, g := range got {
				ids = append(ids, fmt.Sprintf("%s@%s/v%d", g.ScheduleID, g.NextRunAt.Sub(at(0)), g.Version))
			}
			if fmt.Sprint(ids) != fmt.Sprint(want) {
				t.Fatalf("due: %v, want %v", ids, want)
			}
		}
		due("sch_cursor@2m0s/v1")
		read := mustGetSchedule(t, s, "tenant-a", sc.ScheduleID)
		if !read.NextRunAt.Equal(at(2 * time.Minute)) {
			t.Fatalf("after the plan: next %v, want the planner's cursor", read.NextRunAt)
		}
		paused := *read
		paused.State = record.SchedulePaused
		if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &paused, PrevVersion: 1, Now: at(2 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		due()
		if got := mustGetSchedule(t, s, "tenant-a", sc.ScheduleID); got.State != record.SchedulePaused || !got.NextRunAt.Equal(at(2*time.Minute)) || got.Version != 2 {
			t.Fatalf("paused: %s next %v version %d", got.State, got.NextRunAt, got.Version)
		}
		resumed := paused
		resumed.State = record.ScheduleActive
		if _, err := engine.WriteVersion(ctx, s, engine.VersionChange{Schedule: &resumed, PrevVersion: 2, Now: at(3 * time.Second),
			Next: func(time.Time) time.Time { return at(3 * time.Minute) }}); err != nil {
			t.Fatal(err)
		}
		due("sch_cursor@3m0s/v3")
		// The old version's cursor no longer applies.
		if res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(4 * time.Second), Items: []store.PlanItem{
			planItem(sc, at(2*time.Minute), at(3*time.Minute))}}); err != nil || res.Stale != 1 {
			t.Fatalf("a plan of version 1 after the update: %+v, %v", res, err)
		}
		due("sch_cursor@3m0s/v3")
	})

	t.Run("CommitPlanStaleEpochWritesNothing", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 7, "node-a", at(0)) // live until at(10s)
		sc := planSchedule(t, s, "tenant-a", "sch_fenced", 7, at(time.Minute))
		item := func() store.PlanItem {
			o := NewOccurrence(sc, at(time.Minute))
			o.State = record.OccurrenceEnqueued
			return store.PlanItem{TenantID: "tenant-a", ScheduleID: sc.ScheduleID, Version: 1, Cursor: at(time.Minute),
				NextRunAt: at(2 * time.Minute), State: record.ScheduleActive, MissedCount: 1, Occurrences: []record.Occurrence{o}}
		}
		for _, tc := range []struct {
			what  string
			lease func(store.ShardLease) store.ShardLease
			now   time.Time
		}{
			{"expired at Now", func(l store.ShardLease) store.ShardLease { return l }, at(10 * time.Second)},
			{"older epoch", func(l store.ShardLease) store.ShardLease { l.Epoch--; return l }, at(time.Second)},
			{"newer epoch", func(l store.ShardLease) store.ShardLease { l.Epoch++; return l }, at(time.Second)},
			{"another owner", func(l store.ShardLease) store.ShardLease { l.Owner = "node-b"; return l }, at(time.Second)},
			{"another shard", func(l store.ShardLease) store.ShardLease { l.Shard = 8; return l }, at(time.Second)},
		} {
			res, err := s.CommitPlan(ctx, store.Plan{Lease: tc.lease(lease), Now: tc.now, Items: []store.PlanItem{item()}})
			wantErr(t, "CommitPlan: "+tc.what, err, store.ErrStaleEpoch)
			if res != (store.PlanResult{}) {
				t.Errorf("CommitPlan %s: result %+v, want zero", tc.what, res)
			}
		}
		// A node whose lease was stolen is fenced off too.
		thief, err := s.AcquireShard(ctx, store.AcquireShardParams{Shard: 7, Owner: "node-b", TTL: time.Minute, Now: at(11 * time.Second)})
		if err != nil {
			t.Fatalf("AcquireShard: %v", err)
		}
		_, err = s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(5 * time.Second), Items: []store.PlanItem{item()}})
		wantErr(t, "CommitPlan with a stolen lease, at a time it was live", err, store.ErrStaleEpoch)

		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", sc.ScheduleID), sc)
		assertOccurrenceCount(t, s, sc, 0)

		// The new holder's plan applies.
		res, err := s.CommitPlan(ctx, store.Plan{Lease: thief, Now: at(12 * time.Second), Items: []store.PlanItem{item()}})
		if err != nil || res.Applied != 1 || res.Inserted != 1 {
			t.Fatalf("CommitPlan by the new holder: %+v, %v", res, err)
		}
		if got := assertOccurrenceCount(t, s, sc, 1); got[0].ShardEpoch != 2 {
			t.Errorf("occurrence stamped with epoch %d, want 2", got[0].ShardEpoch)
		}
	})

	// Items name their schedules by id. The planner reads them with
	// DueSchedules first, and a store may remember what it read them at
	// (SQLite remembers their rows): it must apply and refuse exactly the
	// same items as without the read.
	for _, readFirst := range []bool{false, true} {
		name := "CommitPlanStaleItems"
		if readFirst {
			name += "ByRow"
		}
		t.Run(name, func(t *testing.T) { testCommitPlanStaleItems(t, open, readFirst) })
	}

	t.Run("CommitPlanDuplicates", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 7, "node-a", at(0))
		sc := planSchedule(t, s, "tenant-a", "sch_dups", 7, at(time.Minute))
		// A stale node already wrote the first firing (or the planner crashed
		// after writing it elsewhere).
		first := NewOccurrence(sc, at(time.Minute))
		first.State = record.OccurrenceEnqueued
		mustInsertOccurrences(t, s, 1, first)

		it := planItem(sc, at(time.Minute), at(4*time.Minute))
		it.Occurrences = append(it.Occurrences, NewOccurrence(sc, at(2*time.Minute)), NewOccurrence(sc, at(3*time.Minute)), NewOccurrence(sc, at(3*time.Minute)))
		res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{it}})
		if err != nil {
			t.Fatalf("CommitPlan: %v", err)
		}
		if want := (store.PlanResult{Applied: 1, Inserted: 2, Duplicates: 2}); res != want {
			t.Errorf("CommitPlan = %+v, want %+v", res, want)
		}
		assertOccurrence(t, "the occurrence stored first", mustGetOccurrence(t, s, "tenant-a", first.OccurrenceID), first)
		assertOccurrenceCount(t, s, sc, 3)
	})

	t.Run("CommitPlanSameScheduleTwice", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 7, "node-a", at(0))
		sc := planSchedule(t, s, "tenant-a", "sch_twice", 7, at(time.Minute))
		other := planSchedule(t, s, "tenant-a", "sch_once", 7, at(time.Minute))
		// Items apply in order: the second continues from the first's new
		// cursor, the third still names the old one and is stale.
		first := planItem(sc, at(time.Minute), at(2*time.Minute))
		second := planItem(sc, at(2*time.Minute), at(3*time.Minute))
		second.MissedCount = 4
		third := planItem(sc, at(time.Minute), at(9*time.Minute))
		res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second),
			Items: []store.PlanItem{first, planItem(other, at(time.Minute), at(2*time.Minute)), second, third}})
		if err != nil {
			t.Fatalf("CommitPlan: %v", err)
		}
		if want := (store.PlanResult{Applied: 3, Stale: 1, Inserted: 3}); res != want {
			t.Errorf("CommitPlan = %+v, want %+v", res, want)
		}
		got := mustGetSchedule(t, s, "tenant-a", sc.ScheduleID)
		if !got.NextRunAt.Equal(at(3*time.Minute)) || got.MissedCount != sc.MissedCount+4 {
			t.Errorf("schedule after two items: next %v missed %d", got.NextRunAt, got.MissedCount)
		}
		assertOccurrenceCount(t, s, sc, 2)
	})

	t.Run("CommitPlanBatch", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 7, "node-a", at(0))
		// More rows than one multi-row statement takes, in uneven items.
		var items []store.PlanItem
		want := 0
		for i := range 150 {
			sc := planSchedule(t, s, fmt.Sprintf("tenant-%d", i%3), fmt.Sprintf("sch_batch_%03d", i), 7, at(time.Minute))
			it := planItem(sc, at(time.Minute), at(time.Hour))
			for j := range i % 4 {
				it.Occurrences = append(it.Occurrences, NewOccurrence(sc, at(time.Duration(j+2)*time.Minute)))
			}
			want += len(it.Occurrences)
			items = append(items, it)
		}
		res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: items})
		if err != nil {
			t.Fatalf("CommitPlan: %v", err)
		}
		if (res != store.PlanResult{Applied: 150, Inserted: want}) {
			t.Errorf("CommitPlan = %+v, want 150 applied, %d inserted", res, want)
		}
		// Committing the same firings again (new cursors) inserts nothing.
		for i := range items {
			items[i].Cursor = at(time.Hour)
		}
		res, err = s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(2 * time.Second), Items: items})
		if err != nil || (res != store.PlanResult{Applied: 150, Duplicates: want}) {
			t.Errorf("CommitPlan again = %+v, %v; want 150 applied, %d duplicates", res, err, want)
		}
		for i, it := range items {
			sc := &record.Schedule{TenantID: it.TenantID, ScheduleID: it.ScheduleID}
			if got := assertOccurrenceCount(t, s, sc, len(it.Occurrences)); len(got) > 0 && got[0].ShardEpoch != lease.Epoch {
				t.Errorf("item %d: epoch %d", i, got[0].ShardEpoch)
			}
		}
	})

	t.Run("CommitPlanRefusesForeignOccurrences", func(t *testing.T) {
		t.Parallel()
		s, ctx := open(t), t.Context()
		lease := mustAcquire(t, s, 7, "node-a", at(0))
		a := planSchedule(t, s, "tenant-a", "sch_a", 7, at(time.Minute))
		b := planSchedule(t, s, "tenant-a", "sch_b", 7, at(time.Minute))
		for _, tc := range []struct {
			what string
			mut  func(*record.Occurrence)
		}{
			{"another schedule's", func(o *record.Occurrence) { *o = NewOccurrence(b, at(time.Minute)) }},
			{"another version's", func(o *record.Occurrence) {
				o.ScheduleVersion = 2
				o.OccurrenceID = record.OccurrenceID(o.ScheduleID, 2, o.ScheduledFor)
			}},
			{"a forged id", func(o *record.Occurrence) { o.OccurrenceID = "occ_forged" }},
			{"a sub-second time", func(o *record.Occurrence) { o.ScheduledFor = o.ScheduledFor.Add(time.Millisecond); o.OccurrenceID = "" }},
		} {
			it := planItem(a, at(time.Minute), at(2*time.Minute))
			tc.mut(&it.Occurrences[0])
			ok := planItem(b, at(time.Minute), at(2*time.Minute))
			if _, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{ok, it}}); err == nil {
				t.Errorf("CommitPlan with %s occurrence: no error", tc.what)
			}
		}
		for _, sc := range []*record.Schedule{a, b} {
			assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", sc.ScheduleID), sc)
			assertOccurrenceCount(t, s, sc, 0)
		}
	})
}

func mustAcquire(t *testing.T, s Store, shard int, owner string, now time.Time) store.ShardLease {
	t.Helper()
	l, err := s.AcquireShard(t.Context(), store.AcquireShardParams{Shard: shard, Owner: owner, TTL: 10 * time.Second, Now: now})
	if err != nil {
		t.Fatalf("AcquireShard(%d, %s): %v", shard, owner, err)
	}
	return l
}

// planSchedule inserts an ACTIVE schedule in shard with its cursor at next.
func planSchedule(t *testing.T, s Store, tenantID, scheduleID string, shard int, next time.Time) *record.Schedule {
	t.Helper()
	sc := NewSchedule(tenantID, scheduleID)
	sc.Shard, sc.NextRunAt = shard, next
	mustInsertSchedule(t, s, sc)
	return sc
}

// planItem advances sc from cursor to next with one ENQUEUED occurrence at
// the cursor.
func planItem(sc *record.Schedule, cursor, next time.Time) store.PlanItem {
	o := NewOccurrence(sc, cursor)
	o.State = record.OccurrenceEnqueued
	return store.PlanItem{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: sc.Version, Cursor: cursor,
		NextRunAt: next, State: record.ScheduleActive, Occurrences: []record.Occurrence{o}}
}

// testCommitPlanStaleItems: a plan whose items' schedules changed since the
// planner read them applies the others alone. With readFirst, DueSchedules
// reads the schedules before they change, as the planner does.
func testCommitPlanStaleItems(t *testing.T, open func(*testing.T) Store, readFirst bool) {
	t.Parallel()
	s, ctx := open(t), t.Context()
	lease := mustAcquire(t, s, 7, "node-a", at(0))
	ok1 := planSchedule(t, s, "tenant-a", "sch_ok1", 7, at(time.Minute))
	ok2 := planSchedule(t, s, "tenant-a", "sch_ok2", 7, at(time.Minute))
	moved := planSchedule(t, s, "tenant-a", "sch_moved", 7, at(time.Minute))
	updated := planSchedule(t, s, "tenant-a", "sch_updated", 7, at(time.Minute))
	paused := planSchedule(t, s, "tenant-a", "sch_paused", 7, at(time.Minute))
	otherShard := planSchedule(t, s, "tenant-a", "sch_shard8", 8, at(time.Minute))
	wrongTenant := planSchedule(t, s, "tenant-a", "sch_tenant", 7, at(time.Minute))
	if readFirst { // the planner's read
		for _, shard := range []int{7, 8} {
			due, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: shard, Until: at(time.Minute), Limit: 10})
			if err != nil {
				t.Fatalf("DueSchedules: %v", err)
			}
			if len(due) == 0 {
				t.Fatalf("DueSchedules of shard %d: none", shard)
			}
		}
	}

	// Between the planner's read and its commit:
	mustUpdate(t, s, updated, 1, at(0), nil) // a new version
	paused.State = record.SchedulePaused
	mustUpdate(t, s, paused, 1, at(0), nil)
	paused = mustGetSchedule(t, s, "tenant-a", paused.ScheduleID)
	res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(time.Second), Items: []store.PlanItem{planItem(moved, at(time.Minute), at(90*time.Second))}})
	if err != nil || res.Applied != 1 {
		t.Fatalf("CommitPlan moving the cursor: %+v, %v", res, err)
	}
	movedNow := mustGetSchedule(t, s, "tenant-a", moved.ScheduleID)

	item := func(sc *record.Schedule) store.PlanItem {
		return planItem(sc, at(time.Minute), at(2*time.Minute))
	}
	foreign := item(wrongTenant)
	foreign.TenantID = "tenant-b"
	for i := range foreign.Occurrences {
		foreign.Occurrences[i].TenantID = "tenant-b"
	}
	items := []store.PlanItem{item(ok1), item(moved), item(updated), item(paused), item(ok2), item(otherShard), foreign}
	items[3].Version = paused.Version // the right version, but PAUSED
	res, err = s.CommitPlan(ctx, store.Plan{Lease: lease, Now: at(2 * time.Second), Items: items})
	if err != nil {
		t.Fatalf("CommitPlan: %v", err)
	}
	if want := (store.PlanResult{Applied: 2, Stale: 5, Inserted: 2}); res != want {
		t.Errorf("CommitPlan = %+v, want %+v", res, want)
	}
	for _, sc := range []*record.Schedule{ok1, ok2} {
		if got := mustGetSchedule(t, s, "tenant-a", sc.ScheduleID); !got.NextRunAt.Equal(at(2 * time.Minute)) {
			t.Errorf("%s: cursor %v, want advanced", sc.ScheduleID, got.NextRunAt)
		}
		assertOccurrenceCount(t, s, sc, 1)
	}
	for _, sc := range []*record.Schedule{movedNow, paused, otherShard, wrongTenant} {
		assertScheduleEqual(t, mustGetSchedule(t, s, "tenant-a", sc.ScheduleID), sc)
	}
	for _, sc := range []*record.Schedule{updated, paused, otherShard, wrongTenant} {
		assertOccurrenceCount(t, s, sc, 0)
	}
	assertOccurrenceCount(t, s, moved, 1) // from its own plan only
}
