package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/rowcodec"
	"github.com/sched-dev/sched/internal/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dsnVar names the environment variable that holds the test database's
// DSN. With it set, a test that cannot connect fails; without it, the
// tests that need a database skip.
const dsnVar = "SCHED_TEST_POSTGRES_DSN"

// testDSN returns the test database's DSN, or skips the test.
func testDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(dsnVar)
	if dsn == "" {
		tb.Skip("PostgreSQL tests skipped: set " + dsnVar + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run them")
	}
	return dsn
}

// newSchema returns a fresh schema name, and drops the schema when the test
// ends (after the stores opened on it are closed: cleanups run last first).
func newSchema(tb testing.TB, dsn string) string {
	tb.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	schema := "t_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		if err := DropSchema(context.Background(), dsn, schema); err != nil {
			tb.Errorf("DropSchema: %v", err)
		}
	})
	return schema
}

// openSchema opens a Store on schema and closes it when the test ends.
func openSchema(tb testing.TB, dsn, schema string, opts ...Option) *Store {
	tb.Helper()
	s, err := Open(tb.Context(), dsn, append([]Option{WithSchema(schema)}, opts...)...)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTest opens a Store on a schema of its own, dropped at the end of the
// test, so that tests run in parallel on one database.
func openTest(tb testing.TB, opts ...Option) *Store {
	tb.Helper()
	dsn := testDSN(tb)
	return openSchema(tb, dsn, newSchema(tb, dsn), opts...)
}

// openWithoutAutovacuum is openTest with autovacuum off for the
// occurrences table, for tests that decide when its statistics are
// gathered (the plans before statistics, the store's own ANALYZE).
func openWithoutAutovacuum(t *testing.T) *Store {
	t.Helper()
	s := openTest(t)
	if _, err := s.pool.Exec(t.Context(), "ALTER TABLE occurrences SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	testDSN(t)
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		return openTest(t)
	})
}

// TestMigrationsRaceOnce: several nodes opening an empty schema at once
// migrate it exactly once (the advisory lock), and all of them end up
// with a usable store.
func TestMigrationsRaceOnce(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, m := range ms {
		all = append(all, m.Version)
	}
	const nodes = 6
	var (
		wg      sync.WaitGroup
		stores  [nodes]*Store
		errs    [nodes]error
		applied [nodes][]int
	)
	for i := range nodes {
		wg.Go(func() {
			stores[i], errs[i] = Open(t.Context(), dsn, WithSchema(schema), WithMaxConns(2))
			if errs[i] == nil {
				applied[i] = stores[i].applied
			}
		})
	}
	wg.Wait()
	migrated := 0
	for i := range nodes {
		if errs[i] != nil {
			t.Errorf("node %d: Open: %v", i, errs[i])
			continue
		}
		t.Cleanup(func() { stores[i].Close() })
		switch {
		case slices.Equal(applied[i], all):
			migrated++
		case len(applied[i]) != 0:
			t.Errorf("node %d applied %v", i, applied[i])
		}
	}
	if migrated != 1 {
		t.Errorf("%d nodes applied the migrations, want exactly 1", migrated)
	}
	var n int
	if err := stores[0].pool.QueryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Errorf("schema_migrations has %d rows, %v; want %d", n, err, len(ms))
	}
	// A later Open applies nothing.
	if s := openSchema(t, dsn, schema); len(s.applied) != 0 {
		t.Errorf("reopen applied %v", s.applied)
	}
	for i, s := range stores {
		if s == nil {
			continue
		}
		if _, err := s.InitShards(t.Context(), 4); err != nil {
			t.Errorf("node %d: InitShards: %v", i, err)
		}
	}
}

// TestNewerSchemaRefused: a schema written by a newer release is refused,
// and left as it was.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	s := openSchema(t, dsn, schema)
	if _, err := s.pool.Exec(t.Context(), qRecordMigration, 99, "0099_future.sql", int64(0)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), dsn, WithSchema(schema))
	if err == nil {
		t.Fatal("Open of a schema at version 99: no error")
	}
	t.Logf("refused: %v", err)
}

// TestDefaultSchema: without WithSchema the store lives in the DSN's
// search_path.
func TestDefaultSchema(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), qCreateSchemaPrefix+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, err := Open(t.Context(), dsn+sep+"search_path="+schema)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if s.Schema() != schema {
		t.Errorf("Schema() = %q, want %q", s.Schema(), schema)
	}
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = $1`, schema).Scan(&n); err != nil || n == 0 {
		t.Errorf("%d tables in %s, %v", n, schema, err)
	}
}

// TestUnreachableFails: with a DSN set, a database that cannot be reached
// is an error, not a skip.
func TestUnreachableFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("Open of a closed port: no error")
	}
}

// TestSimpleProtocolRefused: a DSN asking for the simple protocol, which
// would splice values into SQL text, is refused.
func TestSimpleProtocolRefused(t *testing.T) {
	_, err := Open(t.Context(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&default_query_exec_mode=simple_protocol")
	if err == nil {
		t.Fatal("Open with the simple protocol: no error")
	}
}

func TestBadSchemaName(t *testing.T) {
	for _, name := range []string{string(make([]byte, 64)), "a\x00b", "\xff"} {
		if _, err := Open(t.Context(), "postgres://postgres@127.0.0.1:1/test", WithSchema(name)); err == nil {
			t.Errorf("Open with schema %q: no error", name)
		}
	}
}

// TestConcurrentClaimers: two pools (two nodes) claim and ack the same
// queues at once; every occurrence is claimed exactly once and ends
// SUCCEEDED.
func TestConcurrentClaimers(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	nodes := []*Store{openSchema(t, dsn, schema, WithMaxConns(4)), openSchema(t, dsn, schema, WithMaxConns(4))}
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const (
		tenants = 2
		perSch  = 100
		schs    = 6
	)
	var occs []record.Occurrence
	for i := range schs {
		sc := storetest.NewSchedule(fmt.Sprintf("tenant-%d", i%tenants), fmt.Sprintf("sch_conc_%d", i))
		sc.Queue, sc.OverlapPolicy = "jobs", record.OverlapAllow
		if err := nodes[0].InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		for j := range perSch {
			o := storetest.NewOccurrence(sc, t0.Add(time.Duration(j)*time.Second))
			o.State = record.OccurrenceEnqueued
			o.Lane = []record.Lane{record.LaneStrict, record.LaneFlexible, record.LaneCatchUp}[j%3]
			occs = append(occs, o)
		}
	}
	if n, err := nodes[1].InsertOccurrences(ctx, occs); err != nil || n != len(occs) {
		t.Fatalf("InsertOccurrences: %d, %v", n, err)
	}
	now := t0.Add(time.Hour)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for w := range 8 {
		s := nodes[w%2]
		tenant := fmt.Sprintf("tenant-%d", w%tenants)
		wg.Go(func() {
			var acks []store.FinishParams
			for {
				res, got, err := engine.FinishAndClaim(ctx, s, acks, store.ClaimParams{TenantID: tenant, Queue: "jobs",
					WorkerID: fmt.Sprintf("w%d", w), Limit: 7, Lease: time.Minute, Now: now})
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				for _, r := range res {
					if r.Err != nil {
						t.Errorf("worker %d: ack: %v", w, r.Err)
					}
				}
				if len(got) == 0 {
					return
				}
				acks = acks[:0]
				mu.Lock()
				for _, c := range got {
					seen[c.Occurrence.OccurrenceID]++
					acks = append(acks, store.FinishParams{TenantID: tenant, OccurrenceID: c.Occurrence.OccurrenceID,
						Attempt: c.Attempt.Attempt, Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(occs) {
		t.Errorf("claimed %d distinct occurrences, want %d", len(seen), len(occs))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s claimed %d times", id, n)
		}
	}
	for i := range tenants {
		tenant := fmt.Sprintf("tenant-%d", i)
		if n, err := nodes[0].CountOccurrences(ctx, tenant, record.OccurrenceSucceeded); err != nil || n != len(occs)/tenants {
			t.Errorf("%s: %d SUCCEEDED, %v; want %d", tenant, n, err, len(occs)/tenants)
		}
	}
}

// TestConcurrentOverlap: claimers of two pools race for one schedule's
// occurrences; skip_if_running and queue_one must leave at most one
// RUNNING, and the claims' Skipped counts add up to the SKIPPED_OVERLAP
// rows, each counted by the one claim that marked it. Repeated, to give
// the race its chances.
func TestConcurrentOverlap(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	nodes := []*Store{openSchema(t, dsn, schema, WithMaxConns(4)), openSchema(t, dsn, schema, WithMaxConns(4))}
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for round := range 20 {
		policy := []record.OverlapPolicy{record.OverlapSkipIfRunning, record.OverlapQueueOne}[round%2]
		sc := storetest.NewSchedule("tenant-a", fmt.Sprintf("sch_ovl_%02d", round))
		sc.Name = sc.ScheduleID
		sc.Queue, sc.OverlapPolicy = fmt.Sprintf("q%02d", round), policy
		if err := nodes[0].InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		var occs []record.Occurrence
		for j := range 12 {
			o := storetest.NewOccurrence(sc, t0.Add(time.Duration(j)*time.Minute))
			o.State = record.OccurrenceEnqueued
			occs = append(occs, o)
		}
		if _, err := nodes[0].InsertOccurrences(ctx, occs); err != nil {
			t.Fatal(err)
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			claimed int
			skipped int
			start   = make(chan struct{})
		)
		for w := range 6 {
			wg.Go(func() {
				<-start
				var mine int
				got, err := engine.ClaimOccurrences(ctx, nodes[w%2], store.ClaimParams{TenantID: "tenant-a", Queue: sc.Queue,
					WorkerID: fmt.Sprintf("w%d", w), Limit: 3, Lease: time.Minute, Now: t0.Add(time.Hour), Skipped: &mine})
				if err != nil {
					t.Errorf("round %d worker %d: %v", round, w, err)
				}
				mu.Lock()
				claimed += len(got)
				skipped += mine
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		running, err := nodes[1].ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: sc.ScheduleID, State: record.OccurrenceRunning})
		if err != nil {
			t.Fatal(err)
		}
		if len(running) != 1 || claimed != 1 {
			t.Errorf("round %d (%s): %d RUNNING, %d claimed; want exactly 1", round, policy, len(running), claimed)
		}
		marked, err := nodes[1].ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: sc.ScheduleID, State: record.OccurrenceSkippedOverlap})
		if err != nil {
			t.Fatal(err)
		}
		if skipped != len(marked) {
			t.Errorf("round %d (%s): the claims counted %d skipped, %d are SKIPPED_OVERLAP", round, policy, skipped, len(marked))
		}
	}
}

// TestConcurrentManualTrigger: nodes insert the same manual occurrence at
// once, each at its own time (a trigger retried through several nodes),
// while the planner's firing of the same second goes in too. The manual
// id names the schedule and key alone, so the race ends with one manual
// row and no error (the primary key arbitrates ON CONFLICT DO NOTHING, and
// the rows turned away are the same occurrence), beside the firing.
func TestConcurrentManualTrigger(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	nodes := []*Store{openSchema(t, dsn, schema, WithMaxConns(4)), openSchema(t, dsn, schema, WithMaxConns(4))}
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for round := range 10 {
		sc := storetest.NewSchedule("tenant-a", fmt.Sprintf("sch_trig_%02d", round))
		sc.Name = sc.ScheduleID
		if err := nodes[0].InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			inserted int
			start    = make(chan struct{})
		)
		for w := range 8 {
			wg.Go(func() {
				<-start
				o := storetest.NewOccurrence(sc, t0.Add(time.Duration(w/2)*time.Second))
				if w%2 == 1 {
					o.TriggerKey, o.OccurrenceID = "key", record.ManualOccurrenceID(sc.ScheduleID, "key")
				}
				n, err := nodes[w%2].InsertOccurrences(ctx, []record.Occurrence{o})
				if err != nil {
					t.Errorf("round %d node %d: %v", round, w, err)
				}
				mu.Lock()
				inserted += n
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		got, err := nodes[0].ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a", ScheduleID: sc.ScheduleID})
		if err != nil {
			t.Fatal(err)
		}
		manual := 0
		for _, o := range got {
			if o.Manual() {
				manual++
			}
		}
		// Four timetable firings (seconds 0 to 3) and one manual row.
		if len(got) != 5 || manual != 1 || inserted != 5 {
			t.Errorf("round %d: %d rows (%d manual), %d inserted; want 5 (1 manual), 5", round, len(got), manual, inserted)
		}
	}
}

// TestWriteStatMinutesNUL: a node id PostgreSQL cannot store (NUL is not
// allowed in text) fails the whole call before anything is written, the
// prune included. The suite (storetest) covers the refusals every store
// shares.
func TestWriteStatMinutesNUL(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	m := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	good := store.StatMinute{NodeID: "node-a", Minute: m, Data: []byte("a")}
	if err := s.WriteStatMinutes(ctx, []store.StatMinute{good}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ok := store.StatMinute{NodeID: "node-c", Minute: m, Data: []byte("c")}
	if err := s.WriteStatMinutes(ctx, []store.StatMinute{ok, {NodeID: "a\x00b", Minute: m}}, m.Add(time.Hour)); err == nil {
		t.Fatal("no error")
	}
	got, err := s.ReadStatMinutes(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].NodeID != "node-a" || !got[0].Minute.Equal(m) {
		t.Errorf("after a refused write: %+v, want node-a's row alone", got)
	}
}

// TestConcurrentFinishAndExpire: a late ack racing the lease rescuer; one
// of them wins, never both.
func TestConcurrentFinishAndExpire(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	a, b := openSchema(t, dsn, schema), openSchema(t, dsn, schema)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	sc := storetest.NewSchedule("tenant-a", "sch_race")
	sc.Queue, sc.OverlapPolicy = "jobs", record.OverlapAllow
	if err := a.InsertSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	var occs []record.Occurrence
	for j := range 200 {
		o := storetest.NewOccurrence(sc, t0.Add(time.Duration(j)*time.Second))
		o.State = record.OccurrenceEnqueued
		occs = append(occs, o)
	}
	if _, err := a.InsertOccurrences(ctx, occs); err != nil {
		t.Fatal(err)
	}
	got, err := engine.ClaimOccurrences(ctx, a, store.ClaimParams{TenantID: "tenant-a", Queue: "jobs", WorkerID: "w", Limit: len(occs), Lease: time.Second, Now: t0.Add(time.Hour)})
	if err != nil || len(got) != len(occs) {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	later := t0.Add(2 * time.Hour)
	var (
		wg      sync.WaitGroup
		acked   = map[string]bool{}
		expired int
	)
	wg.Go(func() {
		for _, c := range got {
			res, err := a.FinishAttempts(ctx, []store.FinishParams{{TenantID: "tenant-a", OccurrenceID: c.Occurrence.OccurrenceID,
				Attempt: 1, Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: later}})
			if err != nil {
				t.Errorf("finish: %v", err)
				return
			}
			switch {
			case res[0].Err == nil:
				acked[c.Occurrence.OccurrenceID] = true
			case !errors.Is(res[0].Err, store.ErrStaleAttempt):
				t.Errorf("finish: %v", res[0].Err)
			}
		}
	})
	wg.Go(func() {
		for {
			res, err := engine.ExpireLeases(ctx, b, later, 7)
			if err != nil {
				t.Errorf("expire: %v", err)
				return
			}
			if res.Expired == 0 {
				return
			}
			expired += res.Expired
		}
	})
	wg.Wait()
	// Leases left RUNNING by rows the rescuer skipped while locked.
	for {
		res, err := engine.ExpireLeases(ctx, b, later, 100)
		if err != nil {
			t.Fatal(err)
		}
		if res.Expired == 0 {
			break
		}
		expired += res.Expired
	}
	if len(acked)+expired != len(occs) {
		t.Errorf("%d acked + %d expired, want %d in all", len(acked), expired, len(occs))
	}
	for _, o := range occs {
		got, err := a.GetOccurrence(ctx, "tenant-a", o.OccurrenceID)
		if err != nil {
			t.Fatal(err)
		}
		want := record.OccurrenceEnqueued
		if acked[o.OccurrenceID] {
			want = record.OccurrenceSucceeded
		}
		if got.State != want {
			t.Errorf("%s: %s, want %s", o.OccurrenceID, got.State, want)
		}
	}
}

// TestStaleNodeFenced: the lease row is held FOR SHARE by a plan until it
// commits, so a takeover waits for it; after the takeover the old holder's
// plans are refused.
func TestStaleNodeFenced(t *testing.T) {
	dsn := testDSN(t)
	schema := newSchema(t, dsn)
	a, b := openSchema(t, dsn, schema), openSchema(t, dsn, schema)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	old, err := engine.AcquireShard(ctx, a, store.AcquireShardParams{Shard: 1, Owner: "node-a", TTL: 10 * time.Second, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	sc := storetest.NewSchedule("tenant-a", "sch_fence")
	sc.Shard, sc.NextRunAt = 1, t0.Add(time.Minute)
	if err := a.InsertSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	// Node b takes the shard over once a's lease has expired at b's clock.
	thief, err := engine.AcquireShard(ctx, b, store.AcquireShardParams{Shard: 1, Owner: "node-b", TTL: 10 * time.Second, Now: t0.Add(11 * time.Second)})
	if err != nil || thief.Epoch != old.Epoch+1 {
		t.Fatalf("takeover: %+v, %v", thief, err)
	}
	o := storetest.NewOccurrence(sc, t0.Add(time.Minute))
	o.State = record.OccurrenceEnqueued
	item := store.PlanItem{TenantID: "tenant-a", ScheduleID: sc.ScheduleID, Version: 1, Cursor: t0.Add(time.Minute),
		NextRunAt: t0.Add(2 * time.Minute), State: record.ScheduleActive, Occurrences: []record.Occurrence{o}}
	// The paused node wakes with its old lease and a clock at which it was
	// live: refused.
	_, err = a.CommitPlan(ctx, store.Plan{Lease: old, Now: t0.Add(5 * time.Second), Items: []store.PlanItem{item}})
	if !errors.Is(err, store.ErrStaleEpoch) {
		t.Fatalf("stale CommitPlan: %v, want ErrStaleEpoch", err)
	}
	res, err := b.CommitPlan(ctx, store.Plan{Lease: thief, Now: t0.Add(12 * time.Second), Items: []store.PlanItem{item}})
	if err != nil || res.Inserted != 1 {
		t.Fatalf("CommitPlan by the holder: %+v, %v", res, err)
	}

	// A takeover waits for a plan in progress under the lease: hold the
	// lease row FOR SHARE in an open transaction, as CommitPlan does.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var one int
	if err := tx.QueryRow(ctx, qCheckLease, thief.Shard, thief.Owner, thief.Epoch, ms(t0.Add(13*time.Second))).Scan(&one); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := engine.AcquireShard(ctx, a, store.AcquireShardParams{Shard: 1, Owner: "node-a", TTL: 10 * time.Second, Now: t0.Add(time.Hour)})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("takeover did not wait for the plan in progress: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("takeover after the plan committed: %v", err)
	}
}

// TestUnstorableKeys: keys PostgreSQL text cannot hold (NUL, invalid
// UTF-8) find nothing, as they would in SQLite, instead of failing.
func TestUnstorableKeys(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	for _, key := range []string{"a\x00b", "\xff\xfe"} {
		if _, err := s.GetSchedule(ctx, "tenant-a", key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSchedule(%q): %v, want ErrNotFound", key, err)
		}
		if _, err := s.GetOccurrence(ctx, key, "occ_x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetOccurrence(%q): %v, want ErrNotFound", key, err)
		}
		if _, err := s.ListAttempts(ctx, store.ListAttemptsParams{TenantID: "tenant-a", OccurrenceID: key, Limit: store.MaxListLimit}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ListAttempts(%q): %v, want ErrNotFound", key, err)
		}
		if got, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: key}); err != nil || len(got) != 0 {
			t.Errorf("ListOccurrences(%q): %v, %v", key, got, err)
		}
		// A page key no row can hold is a bad request.
		if _, err := s.ListOccurrences(ctx, store.ListOccurrencesParams{TenantID: "tenant-a",
			After: &store.OccurrenceKey{ScheduledFor: time.Now(), OccurrenceID: key}}); err == nil {
			t.Errorf("ListOccurrences after %q: no error", key)
		}
		if n, err := engine.PurgeDead(ctx, s, store.PurgeDeadParams{TenantID: key, Now: time.Now(), Limit: 10}); err != nil || n != 0 {
			t.Errorf("PurgeDead(%q): %d, %v", key, n, err)
		}
		res, err := s.FinishAttempts(ctx, []store.FinishParams{{TenantID: "tenant-a", OccurrenceID: key, Attempt: 1,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: time.Now()}})
		if err != nil || !errors.Is(res[0].Err, store.ErrNotFound) {
			t.Errorf("FinishAttempts(%q): %v, %v", key, res, err)
		}
	}
}

func TestClockOffset(t *testing.T) {
	s := openTest(t)
	d, err := s.ClockOffset(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The database runs on this machine: one clock.
	if d < -time.Second || d > time.Second {
		t.Errorf("ClockOffset = %v, want about 0 on one machine", d)
	}
}

// TestClockOffsetIgnoresPoolWait: with every connection of the pool
// busy, the wait for one is not part of the round trip measured, so the
// offset stays about 0 on one machine; counted, half of the wait went
// into it.
func TestClockOffsetIgnoresPoolWait(t *testing.T) {
	s := openTest(t, WithMaxConns(1))
	ctx := t.Context()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const held = 1500 * time.Millisecond
	release := time.AfterFunc(held, conn.Release)
	defer release.Stop()
	d, err := s.ClockOffset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d < -held/4 || d > held/4 {
		t.Errorf("ClockOffset = %v after waiting %v for the pool's one connection, want about 0", d, held)
	}
}

func TestCloseTwice(t *testing.T) {
	s := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{pgx.ErrNoRows, store.ErrNotFound},
		{&pgconn.PgError{Code: "23505"}, store.ErrConflict},
		{&pgconn.PgError{Code: "23503"}, store.ErrNotFound},
		{&pgconn.PgError{Code: "40001"}, store.ErrBusy},
		{&pgconn.PgError{Code: "40P01"}, store.ErrBusy},
		{&pgconn.PgError{Code: "55P03"}, store.ErrBusy},
		{&pgconn.PgError{Code: "53100"}, store.ErrStoreFull},
		{&pgconn.PgError{Code: "XX001"}, store.ErrCorrupt},
		{&pgconn.PgError{Code: "XX002"}, store.ErrCorrupt},
		{fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "23505"}), store.ErrConflict},
		{&pgconn.PgError{Code: "23514"}, nil}, // a CHECK: no sentinel
		{errors.New("other"), nil},
	} {
		got := translate(tc.err)
		for _, sentinel := range []error{store.ErrNotFound, store.ErrConflict, store.ErrBusy, store.ErrStoreFull, store.ErrCorrupt} {
			if errors.Is(got, sentinel) != (sentinel == tc.want) {
				t.Errorf("translate(%v) = %v: errors.Is(%v) = %v", tc.err, got, sentinel, !(sentinel == tc.want))
			}
		}
		if !errors.Is(got, tc.err) {
			var pe *pgconn.PgError
			if errors.As(tc.err, &pe) && !errors.As(got, &pe) {
				t.Errorf("translate(%v) lost the native error", tc.err)
			}
		}
	}
	if translate(nil) != nil {
		t.Error("translate(nil) != nil")
	}
}

func TestLoadMigrations(t *testing.T) {
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil || len(ms) == 0 || ms[0].Version != 1 {
		t.Fatalf("loadMigrations: %v, %v", ms, err)
	}
}

// TestFirstUndeliveredPlan: FirstUndelivered reads the schedule's open
// occurrences (index occurrences_open), never its history, even when the
// statistics are stale: taken while a burst was ENQUEUED, before it was
// acked. Then the planner rates the natural key's index, walked in time
// order, as the cheap way to the minimum, and a plain min(scheduled_for)
// read every acked row of the schedule first.
func TestFirstUndeliveredPlan(t *testing.T) {
	t.Parallel()
	s, ctx := openTest(t), t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const (
		history = 1995 // acked after the statistics were taken
		open    = 5
		others  = 3 // schedules of another tenant, as many rows each
	)
	var occs []record.Occurrence
	for i := range others + 1 {
		tenant, id := "tenant-b", fmt.Sprintf("sch_plan_%d", i)
		if i == 0 {
			tenant = "tenant-a"
		}
		sc := storetest.NewSchedule(tenant, id)
		sc.Queue, sc.OverlapPolicy = "jobs", record.OverlapAllow
		if err := s.InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		for j := range history + open {
			o := storetest.NewOccurrence(sc, t0.Add(time.Duration(j)*time.Minute))
			o.State = record.OccurrenceEnqueued
			occs = append(occs, o)
		}
	}
	if n, err := s.InsertOccurrences(ctx, occs); err != nil || n != len(occs) {
		t.Fatalf("InsertOccurrences: %d, %v", n, err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE occurrences"); err != nil {
		t.Fatal(err)
	}
	now := t0.Add((history - 1) * time.Minute)
	got, err := engine.ClaimOccurrences(ctx, s, store.ClaimParams{TenantID: "tenant-a", Queue: "jobs", WorkerID: "w",
		Limit: history + open, Lease: time.Hour, Now: now})
	if err != nil || len(got) != history {
		t.Fatalf("ClaimOccurrences: %d, %v; want %d", len(got), err, history)
	}
	acks := make([]store.FinishParams, len(got))
	for i, c := range got {
		acks[i] = store.FinishParams{TenantID: "tenant-a", OccurrenceID: c.Occurrence.OccurrenceID, Attempt: c.Attempt.Attempt,
			Result: record.ResultSucceeded, State: record.OccurrenceSucceeded, Now: now}
	}
	if _, err := s.FinishAttempts(ctx, acks); err != nil {
		t.Fatal(err)
	}

	first, err := s.FirstUndelivered(ctx, "tenant-a", "sch_plan_0", 1)
	if want := t0.Add(history * time.Minute); err != nil || !first.Equal(want) {
		t.Errorf("FirstUndelivered = %v, %v; want %v", first, err, want)
	}
	rows, err := s.pool.Query(ctx, "EXPLAIN "+qFirstUndelivered, "tenant-a", "sch_plan_0", int64(1))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "occurrences_open on occurrences") {
		t.Errorf("plan does not read index occurrences_open:\n%s", text)
	}
	for _, never := range []string{"Seq Scan on occurrences", "occurrences_schedule_id_"} {
		if strings.Contains(text, never) {
			t.Errorf("plan has %q:\n%s", never, text)
		}
	}
}

// TestListingPlans: a page of a tenant's occurrences, of an occurrence's
// attempts and of the audit log is an index walk from the page's key that
// stops at the page's end, never a scan of the table or a sort of what the
// filters let through, once the statistics show a busy log: a tenant's
// occurrences walk occurrences_tenant_time either way; the audit log's rows
// of a tenant walk audit_log_tenant and a target's audit_log_target, after
// one seek of audit_log_at; the attempts their primary key.
func TestListingPlans(t *testing.T) {
	t.Parallel()
	s, ctx := openTest(t), t.Context()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const rows = 2000 // per tenant and table
	var occs []record.Occurrence
	for i, tenant := range []string{"tenant-a", "tenant-b"} {
		sc := storetest.NewSchedule(tenant, fmt.Sprintf("sch_list_%d", i))
		if err := s.InsertSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		for j := range rows {
			occs = append(occs, storetest.NewOccurrence(sc, t0.Add(time.Duration(j)*time.Minute)))
		}
	}
	if n, err := s.InsertOccurrences(ctx, occs); err != nil || n != len(occs) {
		t.Fatalf("InsertOccurrences: %d, %v", n, err)
	}
	// A busy log of tenant-b's twenty schedules, and a few rows of
	// tenant-a's.
	audit := make([]store.AuditEntry, 0, rows+2)
	for j := range rows {
		audit = append(audit, store.AuditEntry{At: t0.Add(time.Duration(j) * time.Second), TenantID: "tenant-b", Action: "schedule.update",
			Target: fmt.Sprintf("sch_%d", j%20)})
	}
	audit = append(audit, store.AuditEntry{At: t0, TenantID: "tenant-a", Action: "schedule.create", Target: "sch_rare"},
		store.AuditEntry{At: t0.Add(time.Hour), TenantID: "tenant-a", Action: "schedule.update", Target: "sch_rare"})
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AppendAudits(ctx, audit); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The history of an occurrence replayed again and again.
	if _, err := s.pool.Exec(ctx, `INSERT INTO attempts (occurrence_id, attempt, attempt_id, tenant_id, worker_id, claimed_at, lease_expires_at)
SELECT $1, n, $1 || '_' || n, 'tenant-a', 'w', 0, 0 FROM generate_series(1, $2::int) AS n`, occs[0].OccurrenceID, rows); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ANALYZE occurrences", "ANALYZE audit_log", "ANALYZE attempts"} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	asc, _ := rowcodec.ListAfter(store.ListOccurrencesParams{})
	desc, _ := rowcodec.ListAfter(store.ListOccurrencesParams{Reverse: true})
	listing := func(p store.ListAuditParams) []any {
		_, args := rowcodec.AuditListing(p, "", "", "")
		return args
	}
	logArgs := listing(store.ListAuditParams{Since: t0.Add(time.Hour)})
	tenantArgs := listing(store.ListAuditParams{TenantID: "tenant-a"})
	targetArgs := listing(store.ListAuditParams{Target: "sch_1", Since: t0.Add(time.Minute), Limit: 10})
	never := []string{"Seq Scan", "Sort", "Bitmap"}
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		want  []string
		never []string
	}{
		{"tenant's occurrences", qListTenantOccurrencesAsc, []any{"tenant-a", "", "", asc, "", 100},
			[]string{"Index Scan using occurrences_tenant_time on occurrences"}, never},
		{"tenant's occurrences (newest first)", qListTenantOccurrencesDesc, []any{"tenant-a", "", "", desc, "", 100},
			[]string{"Index Scan Backward using occurrences_tenant_time on occurrences"}, never},
		{"audit", qListAudit, logArgs,
			[]string{"Index Scan Backward using audit_log_at", "Index Scan using audit_log_pkey"}, never},
		{"audit of a tenant", qListAuditTenant, tenantArgs,
			[]string{"Index Scan Backward using audit_log_at", "Index Scan using audit_log_tenant"}, never},
		// A target's rows past the key are few here: the planner may read
		// them all from audit_log_target (a bitmap) and sort them.
		{"audit of a target", qListAuditTarget, targetArgs,
			[]string{"Index Scan Backward using audit_log_at", "on audit_log_target", "Index Cond: ((target = 'sch_1'::text) AND (audit_id > GREATEST("},
			[]string{"Seq Scan", "audit_log_pkey"}},
		// The outer sort puts the page's few rows and the latest in order.
		{"attempts", qListAttempts, []any{"tenant-a", occs[0].OccurrenceID, int64(rows / 2), 100},
			[]string{"Limit", "Index Scan using attempts_pkey on attempts"}, []string{"Seq Scan", "Bitmap"}},
	} {
		text := explain(t, s, tc.name, tc.query, tc.args...)
		storetest.PlanHasInOrder(t, tc.name, text, tc.want)
		for _, n := range tc.never {
			if strings.Contains(text, n) {
				t.Errorf("%s: plan has %q:\n%s", tc.name, n, text)
			}
		}
	}
}
