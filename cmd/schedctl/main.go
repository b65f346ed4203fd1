// Command schedctl is sched's command-line interface: it previews schedules
// offline and drives a running schedd.
package main

import (
	"os"

	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(cli.Run(cmdutil.SystemFactory(version), os.Args[1:]))
}
