// Package version is sched's version: stamped once at build time for both
// binaries, so that schedd --version and schedctl version agree.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/sched-dev/sched/internal/timetable"
)

// Version is sched's release, set at build time with
//
//	-ldflags "-X github.com/sched-dev/sched/internal/version.Version=v1.2.3"
//
// as .goreleaser.yaml does for schedd and schedctl. Unset, it is "dev", or
// the module version `go install ...@v1.2.3` recorded in the binary.
var Version = "dev"

// Get returns Version, or the module version the Go toolchain recorded
// when Version was not stamped.
func Get() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Version
}

// Commit returns the VCS revision the binary was built from, as the Go
// toolchain recorded it (go build in a git checkout records it; goreleaser
// builds in one), with "-dirty" when the tree had uncommitted changes;
// "unknown" when none was recorded (go test, or a build outside a
// checkout). /metrics exports it in sched_build_info, so that an operator
// sees which build each node runs.
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "unknown"
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return rev
}

// Line is a program's version line: its name, v, the Go release it was
// built with, and the tz database it reads zones from (which decides
// when schedules fire), e.g. "schedd v1.2.3 (go1.24.1), tz database 2025b".
func Line(prog, v string) string {
	return fmt.Sprintf("%s %s (%s), tz database %s", prog, v, runtime.Version(), timetable.TZVersion())
}
