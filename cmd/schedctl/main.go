// Command schedctl is sched's command-line interface: it previews schedules
// offline and drives a running schedd.
package main

import (
	"os"

	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/version"
)

func main() {
	os.Exit(cli.Run(cmdutil.SystemFactory(version.Get()), os.Args[1:]))
}
