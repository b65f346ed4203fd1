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

// Line is a program's version line: its name, v, the Go release it was
// built with, and the tz database it reads zones from (which decides
// when schedules fire), e.g. "schedd v1.2.3 (go1.24.1), tz database 2025b".
func Line(prog, v string) string {
	return fmt.Sprintf("%s %s (%s), tz database %s", prog, v, runtime.Version(), timetable.TZVersion())
}
