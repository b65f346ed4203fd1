// Package cluster is schedctl cluster: the schedd nodes on a store and
// who holds each shard.
package cluster

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// ClusterOptions is schedctl cluster.
type ClusterOptions struct {
	IO   *cmdutil.Factory
	API  func() (cmdutil.API, error)
	Ctx  context.Context
	JSON bool
}

// NewCmdCluster builds schedctl cluster.
func NewCmdCluster(f *cmdutil.Factory, runF func(*ClusterOptions) error) *cobra.Command {
	opts := &ClusterOptions{IO: f, API: f.API}
	return &cobra.Command{
		Use:   "cluster",
		Short: "Show the schedd nodes on this store and who holds each shard",
		Long: `Cluster lists the schedd nodes registered in the store (id, address, last
heartbeat, live shards owned, clock offset to the store) and every shard's
lease: owner, epoch and expiry. The epoch grows every time a shard changes
owner. A node stopped cleanly leaves the list at once; a dead one stays,
not live, until its registration expires.

On a terminal it prints two tables; otherwise one tab-separated line per
node ("node" first) and per shard ("shard" first), for cut and awk.`,
		Example: "  schedctl cluster\n  schedctl cluster -o json | jq '.nodes[] | {node_id, shards_owned}'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return clusterRun(opts)
		},
	}
}

func clusterRun(opts *ClusterOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	cl, err := c.Cluster(opts.Ctx)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, cl)
	}
	return printCluster(opts.IO, cl)
}

func printCluster(f *cmdutil.Factory, cl *api.Cluster) error {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var kind []string // a leading kind column when not on a terminal
	if !f.IsTTY {
		kind = []string{"node"}
	}
	nodes := cmdutil.NewTable(f, "NODE", "ADDRESS", "LAST HEARTBEAT", "SHARDS", "CLOCK OFFSET", "LIVE")
	for _, n := range cl.Nodes {
		nodes.Row(append(append([]string(nil), kind...), n.NodeID, n.Address, cmdutil.TSV(n.LastHeartbeat),
			strconv.Itoa(n.ShardsOwned), n.ClockOffset, yes(n.Live))...)
	}
	if err := nodes.Print(); err != nil {
		return err
	}
	if f.IsTTY {
		fmt.Fprintln(f.Out)
	} else {
		kind = []string{"shard"}
	}
	shards := cmdutil.NewTable(f, "SHARD", "OWNER", "EPOCH", "EXPIRES AT", "LIVE")
	for _, s := range cl.Shards {
		shards.Row(append(append([]string(nil), kind...), strconv.Itoa(s.Shard), s.Owner, strconv.FormatInt(s.Epoch, 10),
			cmdutil.TS(s.ExpiresAt), yes(s.Live))...)
	}
	return shards.Print()
}
