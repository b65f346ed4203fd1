package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// BenchmarkPlanAtScale answers one question: does the planner's store work
// per due schedule grow with the number of schedules in the store? Each
// iteration is the planner's read of the next 1,000 due schedules
// (DueSchedules) and its commit of their firings and cursors (CommitPlan),
// the part of a pass that touches tables whose size is the number of
// schedules; the timetable's arithmetic does not depend on it. The due
// schedules of one minute are scattered over the whole table, as the
// schedules due at any minute of a real day are, so a larger table costs
// what it really costs: more index levels and more pages to fetch.
//
// The sizes come from SCHED_BENCH_SCALE (default 100000; e.g.
// 1000000,20000000). SCHED_BENCH_SCALE_ROUNDS (default 1) runs them in
// turn that many times in one process, so that the sizes are measured side
// by side on a shared machine (-count would run one size's repeats back to
// back):
//
//	SCHED_BENCH_SCALE=1000000,20000000 SCHED_BENCH_SCALE_ROUNDS=3 SCHED_BENCH_SCALE_DIR=/var/tmp/scale \
//	    go test -run '^$' -bench PlanAtScale -benchtime 150x -timeout 3h ./internal/store/sqlite
//
// The stores are filled by copying one schedule row in SQL (filling
// 20,000,000 through the API takes 20 minutes; this takes a few), and are
// kept in SCHED_BENCH_SCALE_DIR when it is set, for the next run. Each
// iteration moves 1,000 cursors a year ahead, so a store serves
// size/1,000 iterations before it must be made again (delete the file):
// a store of 1,000,000 serves one run of 3 rounds of 150 in both modes,
// no more.
//
// Each size runs in two modes. serial reads a page, then commits it: the
// store's whole work per due schedule, one step after the other.
// pipelined reads the next page while the previous one commits, as the
// engine's planner does (planner.readDue): the time a planner pass takes
// per due schedule. Besides the time per due schedule (µs/due) each
// reports the read's and the commit's own time (read-µs/due,
// commit-µs/due; in pipelined mode they overlap), and the process's CPU
// per due schedule (cpu-µs/due, of which sys-µs/due in the kernel): the
// reader, the writer and the checkpointer together. preads/due and
// pwrites/due count the pages SQLite fetched from the operating system
// (every page it did not hold in a connection's own cache) and wrote (the
// WAL's and the checkpoint's): where a size's cost comes from.
//
// The operating system's cache decides much of the time: a page fetched
// from the disk costs a hundred times one fetched from memory. Check that
// the files stay cached (fincore) before comparing sizes; on the 24 GiB
// development machine the cache held about 10 GB, so a second 20,000,000
// store read on the side pushes the first one out.
//
// Every size is measured on the same history: before each measurement
// (each size of each round) the occurrences that the earlier measurements
// wrote are deleted, untimed, so that every measurement starts from an
// empty occurrences table and writes the same number of occurrences into
// it, whatever the size and however often its store was used before. (A
// store kept from run to run otherwise holds every earlier run's
// occurrences, and a size used more often is measured on a larger
// occurrences table and its larger indexes.)
func BenchmarkPlanAtScale(b *testing.B) {
	sizes := os.Getenv("SCHED_BENCH_SCALE")
	if sizes == "" {
		sizes = "100000"
	}
	var ns []int
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < scaleSet {
			b.Fatalf("SCHED_BENCH_SCALE: %q is not a count of at least %d", f, scaleSet)
		}
		ns = append(ns, n)
	}
	rounds := 1
	if r := os.Getenv("SCHED_BENCH_SCALE_ROUNDS"); r != "" {
		var err error
		if rounds, err = strconv.Atoi(r); err != nil || rounds < 1 {
			b.Fatalf("SCHED_BENCH_SCALE_ROUNDS: %q is not a count", r)
		}
	}
	// The stores stay open from round to round: opening one checks the
	// whole file, minutes at 20,000,000.
	dir := os.Getenv("SCHED_BENCH_SCALE_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	stores := map[int]*Store{}
	b.Cleanup(func() {
		for _, s := range stores {
			s.Close()
		}
	})
	for range rounds {
		for _, n := range ns {
			for _, mode := range []string{"serial", "pipelined"} {
				b.Run(fmt.Sprintf("schedules=%d/%s", n, mode), func(b *testing.B) {
					if stores[n] == nil {
						stores[n] = scaleStore(b, dir, n)
					}
					benchPlanAtScale(b, stores[n], mode == "pipelined")
				})
			}
		}
	}
}

// scaleSet is how many schedules fall due at each minute of a scale store.
const scaleSet = 1000

func benchPlanAtScale(b *testing.B, s *Store, pipelined bool) {
	ctx := b.Context()
	if _, err := s.w.ExecContext(ctx, qScaleForget); err != nil {
		b.Fatalf("delete the earlier measurements' occurrences: %v", err)
	}
	// The delete's pages go back into the file now, not during the
	// measurement, so that every measurement starts with the WAL copied
	// back and starting over (RESTART keeps the file's size: a truncated
	// WAL grows again during the measurement, and a growing file makes
	// every fsync dearer).
	if _, err := s.w.ExecContext(ctx, `PRAGMA wal_checkpoint(RESTART)`); err != nil {
		b.Fatalf("checkpoint before the measurement: %v", err)
	}
	lease, err := engine.AcquireShard(ctx, s, store.AcquireShardParams{Shard: 0, Owner: "bench", TTL: 1000 * time.Hour, Now: benchT0})
	if err != nil {
		b.Fatal(err)
	}
	first, err := s.DueSchedules(ctx, store.DueSchedulesParams{Shard: 0, Until: benchT0.AddDate(100, 0, 0), Limit: 1})
	if err != nil || len(first) != 1 {
		b.Fatalf("the earliest cursor: %d, %v", len(first), err)
	}
	cursor := first[0].NextRunAt
	type page struct {
		due  []record.Schedule
		took time.Duration
		err  error
	}
	// Each read starts after the last schedule of the page before, as the
	// planner's pages do: a page read while the one before it commits
	// still sees that page's cursors unmoved.
	read := func(at time.Time, after *record.Schedule) <-chan page {
		params := store.DueSchedulesParams{Shard: 0, Until: at, Limit: 2 * scaleSet}
		if after != nil {
			params.AfterRunAt, params.AfterID = after.NextRunAt, after.ScheduleID
		}
		ch := make(chan page, 1)
		go func() {
			began := time.Now()
			due, err := s.DueSchedules(ctx, params)
			ch <- page{due, time.Since(began), err}
		}()
		return ch
	}
	items := make([]store.PlanItem, 0, scaleSet)
	occs := make([]record.Occurrence, scaleSet)
	done := 0
	var readTime, commitTime time.Duration
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	io0, ioErr := processIO()
	var next <-chan page
	for b.Loop() {
		if next == nil {
			next = read(cursor, nil) // the first read is timed too
		}
		pg := <-next
		if pg.err != nil {
			b.Fatal(pg.err)
		}
		due := pg.due
		if len(due) != scaleSet {
			b.Fatalf("%d due at %s, want %d: the store is used up; delete it", len(due), cursor, scaleSet)
		}
		readTime += pg.took
		items = items[:0]
		for i := range due {
			sc := &due[i]
			occs[i] = storetest.NewOccurrence(sc, cursor)
			occs[i].State = record.OccurrenceEnqueued
			items = append(items, store.PlanItem{TenantID: sc.TenantID, ScheduleID: sc.ScheduleID, Version: sc.Version,
				Cursor: cursor, NextRunAt: cursor.AddDate(1, 0, 0), State: record.ScheduleActive, Occurrences: occs[i : i+1]})
		}
		last := &due[len(due)-1]
		if pipelined {
			next = read(cursor.Add(time.Minute), last)
		}
		began := time.Now()
		res, err := s.CommitPlan(ctx, store.Plan{Lease: lease, Now: cursor, Items: items})
		commitTime += time.Since(began)
		if err != nil || res.Inserted != scaleSet {
			b.Fatalf("CommitPlan: %+v, %v", res, err)
		}
		if !pipelined {
			next = read(cursor.Add(time.Minute), last)
		}
		cursor = cursor.Add(time.Minute)
		done += scaleSet
	}
	<-next // the read after the last batch, outside the measurement
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(done), "µs/due")
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if io1, err := processIO(); err == nil && ioErr == nil {
		b.ReportMetric(float64(io1.reads-io0.reads)/float64(done), "preads/due")
		b.ReportMetric(float64(io1.writes-io0.writes)/float64(done), "pwrites/due")
	}
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(done), "cpu-µs/due")
	b.ReportMetric(float64(ru1.Stime.Nano()-ru0.Stime.Nano())/1000/float64(done), "sys-µs/due")
	b.ReportMetric(float64(readTime.Microseconds())/float64(done), "read-µs/due")
	b.ReportMetric(float64(commitTime.Microseconds())/float64(done), "commit-µs/due")
}

// ioCounts is how many read and write system calls the process has made
// (/proc/self/io: syscr, syscw). SQLite reads every page it does not hold
// in its own cache with one pread, and writes each page of a commit with
// one pwrite, so the counts per due schedule are the pages fetched from
// the operating system and written back, whether the file's pages were in
// the operating system's cache or not.
type ioCounts struct{ reads, writes int64 }

func processIO() (ioCounts, error) {
	var c ioCounts
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return c, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return c, fmt.Errorf("/proc/self/io %s: %w", name, err)
		}
		switch name {
		case "syscr":
			c.reads = n
		case "syscw":
			c.writes = n
		}
	}
	return c, nil
}

// scaleStore opens (and if need be fills) the store in dir of n schedules of shard
// 0, scaleSet of them due at each minute from benchT0 on, the minute of
// schedule i a fixed shuffle of i.
func scaleStore(b *testing.B, dir string, n int) *Store {
	b.Helper()
	began := time.Now()
	s, err := Open(b.Context(), filepath.Join(dir, fmt.Sprintf("scale-%d.db", n)))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("opened %d schedules in %s", n, time.Since(began).Round(time.Second))
	var have int
	if err := s.r.QueryRowContext(b.Context(), qScaleCount).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == 0 {
		tmpl := storetest.NewSchedule("tenant-0", "sch_template")
		tmpl.Shard, tmpl.State, tmpl.Queue, tmpl.OverlapPolicy = 0, record.ScheduleCanceled, "jobs", record.OverlapAllow
		tmpl.Payload, tmpl.IdempotencyKey = []byte(`{"job":"scale"}`), ""
		if _, err := s.w.ExecContext(b.Context(), qInsertSchedule, scheduleArgs(tmpl)...); err != nil {
			b.Fatal(err)
		}
		const chunk = 500_000
		for from := 0; from < n; from += chunk {
			to := min(from+chunk, n) - 1
			if _, err := s.w.ExecContext(b.Context(), qScaleFill, from, to, n, scaleSet, benchT0.UnixMilli()); err != nil {
				b.Fatalf("fill %d-%d: %v", from, to, err)
			}
		}
		b.Logf("filled %d schedules in %s", n, time.Since(began).Round(time.Second))
	} else if have != n+1 {
		b.Fatalf("%s holds %d schedules, want %d: delete it", dir, have-1, n)
	}
	return s
}

const (
	qScaleCount = `SELECT count(*) FROM schedules`

	// qScaleForget deletes the occurrences of the earlier measurements
	// (the only ones a scale store holds), so that each measurement
	// starts from the same history.
	qScaleForget = `DELETE FROM occurrences`

	// qScaleFill copies the template (the CANCELED row named
	// sch_template) as ACTIVE schedules ?1..?2 of ?3, each due at minute
	// (i * 7919 mod ?3) / ?4 after ?5: ?4 a minute, scattered over the
	// table. 7919 is prime and does not divide the sizes used.
	qScaleFill = `WITH RECURSIVE i(v) AS (SELECT ?1 UNION ALL SELECT v + 1 FROM i WHERE v < ?2)
INSERT INTO schedules (` + scheduleColumns + `)
SELECT printf('sch_%010d', i.v), 'tenant-' || (i.v % 10), 0, printf('scale %010d', i.v), kind, expr, time_zone, anchor,
    dst_gap, dst_repeat, version, 'ACTIVE', ?5 + ((i.v * 7919) % ?3) / ?4 * 60000, queue, payload,
    misfire_policy, max_lateness_ms, catch_up_k, overlap_policy, flexible_window_ms,
    retry_max_attempts, retry_base_ms, retry_cap_ms, retry_deadline_ms,
    NULL, 0, created_at, updated_at
FROM i, schedules t WHERE t.schedule_id = 'sch_template'`
)
