// Command schedd is sched's daemon: it turns schedules into occurrences on
// a durable queue and serves the HTTP/JSON API to schedctl and workers.
// Everything it does lives in internal/daemon; see `schedd --help`.
package main

import (
	"os"

	"github.com/sched-dev/sched/internal/daemon"
	"github.com/sched-dev/sched/internal/version"
)

func main() {
	os.Exit(daemon.Main(version.Get(), os.Args[1:], os.Stdout, os.Stderr))
}
