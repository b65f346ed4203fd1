// Package admin is schedctl admin: operations on the connected daemon
// itself rather than on schedules, for admins only. reload-tz makes schedd
// read its tz database again (as SIGHUP does) and move the firings whose
// zone's rules changed.
package admin

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// API is what the admin commands ask of schedd (client.Client).
type API interface {
	ReloadTZ(ctx context.Context) (*api.TZReload, error)
}

// NewCmdAdmin builds schedctl admin and its subcommands.
func NewCmdAdmin(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCmd("admin", "Operate the connected schedd itself (admins only)", "  schedctl admin reload-tz")
	cmd.AddCommand(NewCmdReloadTZ(f, nil))
	return cmd
}

// ReloadTZOptions is schedctl admin reload-tz.
type ReloadTZOptions struct {
	IO   *cmdutil.Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool
}

const reloadTZLong = `reload-tz makes the connected schedd read its tz database again (after the
host's tz package was updated, or ZONEINFO points elsewhere), as SIGHUP
does. For every zone of an active cron schedule whose rules changed, schedd
moves the firings computed under the old rules on the shards it holds: an
occurrence materialized ahead and not yet claimed whose instant is no
longer a firing becomes CANCELED (it stays as history), one whose instant
still is keeps its id, and the schedule's cursor moves so that the planner
materializes the new instants under new ids. at and every schedules are
instants whatever their zone and never move.

It prints the tz versions before and after (for a tz database rebuilt with
other rules under a release's version line, as a zone patched with zic
ahead of the release, the version and a digest of the zones that differ:
2026a+local.1f0c9e2b), and one row per changed zone:
SCHEDULES examined, MOVED (those with a firing moved), CANCELED, KEPT and
REPLANNED (new instants the planner materializes). Not on a terminal the
summary line and the tab-separated table (--no-headers: the rows alone).
Each schedd reads its own tz database: in a
cluster, reload (or restart) every node; the summary counts the shards
still planned under another version as pending.`

// NewCmdReloadTZ builds schedctl admin reload-tz.
func NewCmdReloadTZ(f *cmdutil.Factory, runF func(*ReloadTZOptions) error) *cobra.Command {
	opts := &ReloadTZOptions{IO: f, API: func() (API, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}}
	return &cobra.Command{
		Use:     "reload-tz",
		Short:   "Read the tz database again and move the firings whose zone's rules changed",
		Long:    reloadTZLong,
		Example: "  schedctl admin reload-tz\n  schedctl admin reload-tz -o json | jq '.zones[] | {zone, moved}'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return reloadTZRun(opts)
		},
	}
}

func reloadTZRun(opts *ReloadTZOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.ReloadTZ(opts.Ctx)
	if err != nil {
		return fmt.Errorf("admin reload-tz: %w", err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	return printReload(opts.IO, res)
}

// printReload writes a summary line (unless --no-headers) and one row per
// changed zone. The summary names the rules by their labels, which are
// the versions but for a tz database rebuilt under a release's version
// line (a daemon that answers no label is named by its versions).
func printReload(f *cmdutil.Factory, res *api.TZReload) error {
	if f.Decorated() {
		summary := fmt.Sprintf("tz database %s (was %s): ", cmp.Or(res.TZLabel, res.TZVersion),
			cmp.Or(res.PreviousTZLabel, res.PreviousTZVersion))
		if len(res.Zones) == 0 {
			summary += "no zone of an active cron schedule changed its rules."
		} else {
			summary += fmt.Sprintf("%d zone(s) changed; %d shard(s) rezoned, %d pending, %d fenced.",
				len(res.Zones), res.Shards, res.ShardsPending, res.ShardsFenced)
		}
		if _, err := fmt.Fprintln(f.Out, summary); err != nil {
			return err
		}
		if len(res.Zones) == 0 {
			return nil
		}
	}
	t := cmdutil.NewTable(f, "ZONE", "SCHEDULES", "MOVED", "CANCELED", "KEPT", "REPLANNED")
	for _, z := range res.Zones {
		t.Row(z.Zone, strconv.Itoa(z.Schedules), strconv.Itoa(z.Moved), strconv.Itoa(z.Canceled),
			strconv.Itoa(z.Kept), strconv.Itoa(z.Replanned))
	}
	return t.Print()
}
