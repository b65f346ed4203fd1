// Package tztest points a test at one of the test releases of the tz
// database in internal/timetable/testdata/tz (2026a, 2026b: Test/Shift
// moves from UTC-5 to UTC-4 on 2027-02-02 in 2026b; Test/Steady never
// changes; 2026a-local: 2026b's rules rebuilt under the version line
// 2026a; the README there says how they are built). Tests of a tz
// database change, in any package, use it rather than each finding the
// directory and setting ZONEINFO on its own.
package tztest

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sched-dev/sched/internal/timetable"
)

// Dir returns the directory of test release version, absolute, so that a
// schedd process started by the test can be pointed at it too.
func Dir(t testing.TB, version string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("tztest: cannot locate the test tz releases")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "tz", version)
}

// Install points ZONEINFO at test release version for the rest of the
// test without loading it: an operator installing a new tz package under
// a running daemon. The process's zone data is loaded again from the
// default at cleanup.
func Install(t testing.TB, version string) {
	t.Helper()
	t.Setenv("ZONEINFO", Dir(t, version))
	t.Cleanup(func() { timetable.ReloadZones() })
}

// Use installs test release version and loads it, as a daemon started on
// it would have it.
func Use(t testing.TB, version string) {
	t.Helper()
	UseAs(t, version, version)
}

// UseAs installs the test release in directory dir and loads it, checking
// that its tzdata.zi names version: for a release rebuilt under another
// release's version line (2026a-local says 2026a).
func UseAs(t testing.TB, dir, version string) {
	t.Helper()
	Install(t, dir)
	if got := timetable.ReloadZones(); got != version {
		t.Fatalf("tz version with ZONEINFO=%s: %q, want %q", Dir(t, dir), got, version)
	}
}
