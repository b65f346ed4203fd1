package e2e

// Disk full on PostgreSQL: schedd must survive it and lose nothing. A
// throwaway cluster whose data directory lives on a small tmpfs; one schedd
// with a steady load and an in-process worker; the tmpfs is filled to ENOSPC
// with a file of the test's (the cluster's own files are left alone), held
// full, then the file is removed. Checked: schedd stays up, /readyz answers
// 503 while writes fail with store_full, a create answers 507 store_full,
// /readyz comes back to 200 once space is freed, and RECON (see
// cluster_harness_test.go): every expected firing over the whole window is
// stored exactly once, SUCCEEDED or MISSED (the default misfire policy,
// fire_once with max_lateness 60s), nothing else.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// tmpfsSize is the size of the volume of the throwaway cluster's data
// directory.
const tmpfsSize = "64m"

// startTmpfsPG is startThrowawayPG with the data directory on a tmpfs of
// its own, mounted at the returned path (vol). pg_wal is on the ordinary
// disk (initdb -X): a WAL segment that cannot be created is a PANIC, a
// crash and restart of the whole server (the restart fault, tested apart),
// not the disk_full error a full data volume gives a statement; the
// server's log is on the ordinary disk too. It skips the test when it
// cannot mount (not root, or mounts not permitted).
func startTmpfsPG(t *testing.T) (pg *throwawayPG, vol string) {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		t.Skip("no PostgreSQL server tools (initdb, pg_ctl) found in /usr/lib/postgresql/*/bin or PATH: cannot run a throwaway cluster to fill")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot mount a tmpfs to fill (the disk-full test needs mount -t tmpfs)")
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("running as root and there is no postgres user to run initdb as: cannot run a throwaway cluster")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "e2e-pgfull")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	vol = filepath.Join(dir, "vol")
	if err := os.Mkdir(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", vol, "tmpfs", 0, "size="+tmpfsSize+",mode=0755"); err != nil {
		t.Skipf("mount -t tmpfs -o size=%s on %s: %v: cannot make a small volume to fill", tmpfsSize, vol, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(vol, syscall.MNT_DETACH); err != nil {
			t.Errorf("umount %s: %v", vol, err)
		}
	})
	for _, p := range []string{dir, vol} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatalf("hand %s to the postgres user: %v", p, err)
		}
	}
	pg = &throwawayPG{bin: bin, dir: dir, data: filepath.Join(vol, "data"), asPostgres: true}
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Skip("running as root without runuser to run initdb as postgres: cannot run a throwaway cluster")
	}
	if out, err := pg.run("initdb", "-D", pg.data, "-X", filepath.Join(dir, "wal"), "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Skipf("initdb of a throwaway cluster failed (%v): %s", err, out)
	}
	pg.port = strconv.Itoa(freePort(t))
	t.Cleanup(func() {
		if out, err := pg.run("pg_ctl", "-D", pg.data, "-m", "immediate", "-w", "-t", "30", "stop"); err != nil {
			t.Logf("stop the throwaway PostgreSQL: %v: %s", err, out)
		}
		if t.Failed() {
			raw, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
			t.Logf("--- throwaway PostgreSQL log (last 8 KiB):\n%s", raw[max(0, len(raw)-8<<10):])
		}
	})
	if out, err := pg.ctl("start"); err != nil {
		raw, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
		t.Fatalf("start the throwaway PostgreSQL: %v: %s\n%s", err, out, raw)
	}
	return pg, vol
}

// fillVolume writes zeros to path until the volume says ENOSPC, and
// returns how much it wrote.
func fillVolume(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("create the filler: %v", err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatalf("fill %s: %v", path, err)
		}
	}
	// The last partial blocks.
	for _, sz := range []int{4096, 512, 1} {
		for {
			w, err := f.Write(buf[:sz])
			n += int64(w)
			if err != nil {
				break
			}
		}
	}
	return n
}

func TestDiskFullPostgres(t *testing.T) {
	pgDSN(t) // the switch for PostgreSQL tests; the server filled is a throwaway one
	t.Parallel()
	began := time.Now()
	pg, vol := startTmpfsPG(t)
	t.Logf("throwaway PostgreSQL on port %s (%s), data on a %s tmpfs at %s, after %v", pg.port, pg.bin, tmpfsSize, vol,
		time.Since(began).Round(time.Millisecond))
	c := newPGCluster(t, pg.DSN(), 1)
	nd := c.nodes[0]
	for range 10 {
		c.createOne(nd, true) // every 1s; default misfire policy
	}
	c.startWorker(nd, "w1")
	c.waitDelivered(time.Now(), len(c.scheds), "deliveries from every schedule before the fault")

	ready := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return nd.cl.Ready(ctx)
	}
	if err := ready(); err != nil {
		t.Fatalf("readyz before the fault: %v", err)
	}
	logAt := len(nd.log.String())

	// The fault.
	filler := filepath.Join(vol, "filler")
	t.Cleanup(func() { os.Remove(filler) })
	wrote := fillVolume(t, filler)
	full := time.Now()
	var sfs syscall.Statfs_t
	syscall.Statfs(vol, &sfs)
	t.Logf("filled %s: %d MiB written, %d bytes left", vol, wrote>>20, sfs.Bavail*uint64(sfs.Bsize))

	// readyz goes not ready, saying the store is out of space.
	var notReady *client.Error
	took := waitFor(t, "readyz to answer 503 (store out of space)", clusterWait, func() (bool, string) {
		alive(t, nd)
		err := ready()
		if errors.As(err, &notReady) && notReady.Status == 503 && strings.Contains(notReady.Message, "out of space") {
			return true, ""
		}
		return false, fmt.Sprint(err)
	})
	t.Logf("readyz 503 %v after the volume filled: %s: %s", took.Round(time.Millisecond), notReady.Code, notReady.Message)

	// A create answers 507 store_full. One may still fit in a page with
	// room: those are part of the load and of the reconciliation.
	var full507 *client.Error
	waitFor(t, "a create to answer 507 store_full", clusterWait, func() (bool, string) {
		alive(t, nd)
		name := fmt.Sprintf("full-%02d", len(c.scheds))
		sent := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := nd.cl.CreateSchedule(ctx, api.ScheduleRequest{Name: name, Queue: loadQueue, Every: "1s"})
		if errors.As(err, &full507) && full507.Status == 507 && full507.Code == api.CodeStoreFull {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		if res.NextRunAt == nil || res.NextRunAt.Unix() < sent.Unix() {
			t.Fatalf("created %s during the outage: %+v", name, res.Schedule)
		}
		c.scheds = append(c.scheds, loadSchedule{id: res.ScheduleID, name: name, kind: "every", step: 1, first: res.NextRunAt.Unix()})
		return false, "created " + name + " (it fit)"
	})
	t.Logf("create during the outage: %d %s: %s (%d schedules in all)", full507.Status, full507.Code, full507.Message, len(c.scheds))

	// Held full for 10s: the node stays up and not ready all along.
	answers := map[int]int{}
	for time.Since(full) < 10*time.Second {
		alive(t, nd)
		if err := ready(); err == nil {
			answers[200]++
		} else if errors.As(err, &notReady) {
			answers[notReady.Status]++
		} else {
			answers[-1]++
		}
		time.Sleep(pollStep)
	}
	t.Logf("readyz over the rest of the outage: %v (status: count; -1 no answer)", answers)
	if answers[200] > 0 || answers[-1] > 0 {
		t.Errorf("readyz answered 200 %d times, not at all %d times, while the store was full", answers[200], answers[-1])
	}

	// Space freed.
	if err := os.Remove(filler); err != nil {
		t.Fatalf("rm the filler: %v", err)
	}
	freed := time.Now()
	took = waitFor(t, "readyz to answer 200 again", clusterWait, func() (bool, string) {
		alive(t, nd)
		err := ready()
		return err == nil, fmt.Sprint(err)
	})
	t.Logf("readyz 200 %v after the filler was removed (outage %v)", took.Round(time.Millisecond), freed.Sub(full).Round(time.Millisecond))
	w := nd.warnings(logAt)
	nFull := 0
	for _, l := range w {
		if strings.Contains(l, "store: full") {
			nFull++
		}
	}
	t.Logf("schedd logged %d warnings and errors over the outage, %d of them store: full, e.g.:\n  %s", len(w), nFull,
		strings.Join(first(w, 3), "\n  "))
	if nFull == 0 {
		t.Errorf("schedd logged no store: full error while its store was full")
	}

	cutoff := time.Now().Add(2 * time.Second).Truncate(time.Second)
	c.waitDelivered(cutoff, len(c.scheds), "deliveries after the cut-off from every schedule")
	rows := c.drainFull(cutoff)
	c.checkDeliveries(c.dels.snapshot(), rows, cutoff.Unix())
	checkFence(t, rows)
	alive(t, nd)
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}

// drainFull waits until every expected firing of the load (every schedule
// is `every 1s` here) from its first cursor up to cutoff is stored once,
// SUCCEEDED or MISSED, and fails on a duplicate, a phantom or another end
// state. It returns the stored rows.
func (c *pgCluster) drainFull(cutoff time.Time) []occRow {
	t := c.t
	t.Helper()
	cut := cutoff.Unix()
	var rows []occRow
	expected, states := 0, map[string]int{}
	waitFor(t, "every firing up to the cut-off SUCCEEDED or MISSED (RECON)", clusterWait, func() (bool, string) {
		var err error
		if rows, err = c.occurrences(); err != nil {
			return false, err.Error()
		}
		by := map[string]map[int64][]occRow{}
		for _, r := range rows {
			if by[r.sched] == nil {
				by[r.sched] = map[int64][]occRow{}
			}
			by[r.sched][r.sf/1000] = append(by[r.sched][r.sf/1000], r)
		}
		var bad, pending []string
		expected, states = 0, map[string]int{}
		known := map[string]bool{}
		for _, s := range c.scheds {
			known[s.id] = true
			if s.kind != "every" || s.step != 1 {
				t.Fatalf("drainFull reckons every-1s schedules only: %+v", s)
			}
			for sec, got := range by[s.id] {
				if sec < s.first {
					bad = append(bad, fmt.Sprintf("phantom: %s before its first firing: %v", s.name, got))
				}
				if len(got) > 1 {
					bad = append(bad, fmt.Sprintf("%s: %d rows for one firing: %v", s.name, len(got), got))
				}
			}
			for sec := s.first; sec <= cut; sec++ {
				expected++
				got := by[s.id][sec]
				switch {
				case len(got) == 0:
					pending = append(pending, fmt.Sprintf("gap: %s has no row for %s", s.name, time.Unix(sec, 0).UTC().Format(time.TimeOnly)))
				case len(got) > 1:
				case got[0].version != 1 || got[0].sf%1000 != 0:
					bad = append(bad, fmt.Sprintf("%s: %v", s.name, got[0]))
				case got[0].state == "SUCCEEDED" || got[0].state == "MISSED":
					states[got[0].state]++
				case slices.Contains([]string{"SCHEDULED", "ENQUEUED", "RUNNING", "RETRY_WAIT"}, got[0].state):
					pending = append(pending, fmt.Sprintf("%s still %s", s.name, got[0]))
				default:
					bad = append(bad, fmt.Sprintf("%s ended %s, want SUCCEEDED or MISSED: %v", s.name, got[0].state, got[0]))
				}
			}
		}
		for _, r := range rows {
			if !known[r.sched] {
				bad = append(bad, "a row of a schedule the test did not create: "+r.String())
			}
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			t.Fatalf("RECON: %d violations:\n  %s", len(bad), strings.Join(first(bad, 40), "\n  "))
		}
		slices.Sort(pending)
		return len(pending) == 0, fmt.Sprintf("%d not done:\n  %s", len(pending), strings.Join(first(pending, 20), "\n  "))
	})
	t.Logf("RECON: %d expected firings of %d schedules up to %s, each stored once: %v (%d rows in all)",
		expected, len(c.scheds), cutoff.UTC().Format(time.TimeOnly), states, len(rows))
	return rows
}
