// Package cluster is schedctl cluster: the schedd nodes on a store and
// who holds each shard; cluster forget removes a dead node at once.
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

// NewCmdCluster builds schedctl cluster and its subcommand forget.
func NewCmdCluster(f *cmdutil.Factory, runF func(*ClusterOptions) error) *cobra.Command {
	opts := &ClusterOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the schedd nodes on this store and who holds each shard",
		Long: `Cluster lists the schedd nodes registered in the store (id, address, last
heartbeat, live shards owned, clock offset to the store) and every shard's
lease: owner, epoch and expiry. The epoch grows every time a shard changes
owner. A node stopped cleanly leaves the list at once. A dead one (killed,
its host lost) keeps its shards until their leases expire (--shard-lease)
and stays, not live, until the live nodes remove it, 3 shard leases after
its last heartbeat (30s by default); cluster forget removes it sooner.

On a terminal it prints two tables; otherwise one tab-separated line per
node ("node" first) and per shard ("shard" first), each table under a
header line starting with KIND (--no-headers drops them), for cut and
awk.`,
		Example: "  schedctl cluster\n  schedctl cluster -o json | jq '.nodes[] | {node_id, shards_owned}'\n  schedctl cluster forget node-c",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return clusterRun(opts)
		},
	}
	cmd.AddCommand(NewCmdForget(f, nil))
	return cmd
}

// ForgetAPI is what cluster forget asks of schedd (client.Client).
type ForgetAPI interface {
	ForgetNode(ctx context.Context, nodeID string) (*api.ClusterNode, error)
}

// ForgetOptions is schedctl cluster forget.
type ForgetOptions struct {
	IO   *cmdutil.Factory
	API  func() (ForgetAPI, error)
	Ctx  context.Context
	JSON bool
	Node string
}

// NewCmdForget builds schedctl cluster forget.
func NewCmdForget(f *cmdutil.Factory, runF func(*ForgetOptions) error) *cobra.Command {
	opts := &ForgetOptions{IO: f, API: func() (ForgetAPI, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}}
	return &cobra.Command{
		Use:   "forget NODE",
		Short: "Remove a dead node from the cluster at once (admins only)",
		Long: `Forget removes the node NODE from the store's node registry at once, so that
cluster, status and top stop showing it: for a node gone for good (killed,
its host lost, restarted under another node id) that you do not want to
wait for. The live nodes remove such a node by themselves, 3 shard leases
after its last heartbeat (30s by default).

schedd refuses (conflict, exit status 1) while the node may still be
running: while its registration is live (it heartbeated within
--shard-lease) or it holds a live shard lease; the message says until
when. Stop it instead: a node stopped cleanly leaves at once. An unknown
node is not found (exit status 1). Admins only. It prints one line; JSON
output is the node as it was.`,
		Example: "  schedctl cluster forget node-c\n  schedctl cluster forget node-c -o json | jq .last_heartbeat",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Node, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return forgetRun(opts)
		},
	}
}

func forgetRun(opts *ForgetOptions) error {
	if opts.Node == "" {
		return cmdutil.UsageErrorf("cluster forget: give a node id, as schedctl cluster shows it")
	}
	c, err := opts.API()
	if err != nil {
		return err
	}
	n, err := c.ForgetNode(opts.Ctx, opts.Node)
	if err != nil {
		return fmt.Errorf("cluster forget: %w", err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, n)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "forgot node %s (last heartbeat %s)\n", cmdutil.Cell(n.NodeID), cmdutil.TSV(n.LastHeartbeat))
	return err
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
	nodes := cmdutil.NewTable(f, "NODE", "ADDRESS", "LAST HEARTBEAT", "SHARDS", "CLOCK OFFSET", "LIVE").Tag("node")
	for _, n := range cl.Nodes {
		nodes.Row(n.NodeID, n.Address, cmdutil.TSV(n.LastHeartbeat), strconv.Itoa(n.ShardsOwned), n.ClockOffset, yes(n.Live))
	}
	if err := nodes.Print(); err != nil {
		return err
	}
	if f.IsTTY {
		fmt.Fprintln(f.Out)
	}
	shards := cmdutil.NewTable(f, "SHARD", "OWNER", "EPOCH", "EXPIRES AT", "LIVE").Tag("shard")
	for _, s := range cl.Shards {
		shards.Row(strconv.Itoa(s.Shard), s.Owner, strconv.FormatInt(s.Epoch, 10), cmdutil.TS(s.ExpiresAt), yes(s.Live))
	}
	return shards.Print()
}
