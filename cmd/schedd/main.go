// Command schedd is sched's daemon: it turns schedules into occurrences on
// a durable queue and serves the HTTP/JSON API to schedctl and workers.
// Everything it does lives in internal/daemon; see `schedd --help`.
package main

import (
	"os"

	"github.com/sched-dev/sched/internal/daemon"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(daemon.Main(version, os.Args[1:], os.Stdout, os.Stderr))
}
