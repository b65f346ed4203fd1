package timetable

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// useTZ points ZONEINFO at one of the test tz databases and reloads. (The
// tztest package does this for other packages; it imports this one.)
func useTZ(t *testing.T, version string) {
	t.Helper()
	useTZAs(t, version, version)
}

// useTZAs is useTZ for a test database whose directory is not named after
// its version (2026a-local).
func useTZAs(t *testing.T, release, version string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "tz", release))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZONEINFO", dir)
	if got := ReloadZones(); got != version {
		t.Fatalf("ReloadZones with ZONEINFO=%s: version %q, want %q", dir, got, version)
	}
	t.Cleanup(func() { ReloadZones() })
}

// TestReloadZonesRereadsRules swaps the tz database between releases and
// checks that the version, the fingerprints and the firings follow: the
// zone whose rules changed moves, the other one does not; and a database
// rebuilt with 2026b's rules under 2026a's version line (2026a-local)
// reads as version 2026a with 2026b's rules.
func TestReloadZonesRereadsRules(t *testing.T) {
	def := Definition{Kind: KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"}
	after := time.Date(2027, 2, 2, 12, 0, 0, 0, time.UTC)
	type reading struct {
		shift, steady string
		next          time.Time
	}
	readAs := func(release, version string) reading {
		t.Helper()
		useTZAs(t, release, version)
		var r reading
		var err error
		if r.shift, err = ZoneFingerprint("Test/Shift"); err != nil {
			t.Fatal(err)
		}
		if r.steady, err = ZoneFingerprint("Test/Steady"); err != nil {
			t.Fatal(err)
		}
		sp, err := Parse(def)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := sp.Next(after)
		if !ok {
			t.Fatal("no next firing")
		}
		r.next = f.At
		return r
	}
	read := func(version string) reading {
		t.Helper()
		return readAs(version, version)
	}
	a := read("2026a")
	b := read("2026b")
	if a.next != time.Date(2027, 2, 2, 14, 0, 0, 0, time.UTC) {
		t.Errorf("2026a: 09:00 Test/Shift after %s = %s, want 14:00Z (UTC-5)", after, a.next)
	}
	if b.next != time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC) {
		t.Errorf("2026b: 09:00 Test/Shift after %s = %s, want 13:00Z (UTC-4)", after, b.next)
	}
	if a.shift == b.shift {
		t.Errorf("Test/Shift fingerprint %s in both releases; its rules changed", a.shift)
	}
	if a.steady != b.steady {
		t.Errorf("Test/Steady fingerprint %s then %s; its rules did not change", a.steady, b.steady)
	}
	if again := read("2026a"); again != a {
		t.Errorf("2026a read again: %+v, want %+v", again, a)
	}
	if local := readAs("2026a-local", "2026a"); local != b {
		t.Errorf("2026a-local: %+v, want 2026b's rules %+v", local, b)
	}
}

// TestReloadZonesConcurrent reloads while other goroutines load zones and
// compute firings (run with -race): each computation sees one release or
// the other, never a mix or an error.
func TestReloadZonesConcurrent(t *testing.T) {
	useTZ(t, "2026a")
	var dirs [2]string
	for i, v := range []string{"2026a", "2026b"} {
		dirs[i], _ = filepath.Abs(filepath.Join("testdata", "tz", v))
	}
	after := time.Date(2027, 2, 2, 12, 0, 0, 0, time.UTC)
	okAt := map[time.Time]bool{
		time.Date(2027, 2, 2, 14, 0, 0, 0, time.UTC): true, // 2026a
		time.Date(2027, 2, 2, 13, 0, 0, 0, time.UTC): true, // 2026b
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 8)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				sp, err := Parse(Definition{Kind: KindCron, Expr: "0 9 * * *", TimeZone: "Test/Shift"})
				if err != nil {
					errs <- err.Error()
					return
				}
				if f, _ := sp.Next(after); !okAt[f.At] {
					errs <- "next firing " + f.At.String()
					return
				}
			}
		})
	}
	for i := range 50 {
		t.Setenv("ZONEINFO", dirs[i%2])
		ReloadZones()
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
