// Command schedctl is sched's command-line interface: it previews schedules
// offline and drives a running schedd.
package main

import (
	"os"

	"github.com/sched-dev/sched/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(cli.Run(cli.SystemFactory(version), os.Args[1:]))
}
