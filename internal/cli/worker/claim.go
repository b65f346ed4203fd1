package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/occurrence"
)

// errNothingToClaim is claim's answer when the queue had nothing: exit 1,
// so that a script can loop on `until schedctl claim ...`.
var errNothingToClaim = errors.New("nothing to claim")

// defaultWorkerID names this process to schedd: HOSTNAME-PID.
func defaultWorkerID() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "schedctl"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

func durString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// maxLease is the longest lease schedd grants.
const maxLease = 12 * time.Hour

func checkLease(d time.Duration) error {
	if d != 0 && (d < time.Second || d > maxLease) {
		return cmdutil.UsageErrorf("--lease %s: must be from 1s to %s", d, maxLease)
	}
	return nil
}

// fenced names the occurrence and attempt in an error; a refused stale
// attempt reads "... attempt N: stale attempt: ..." (exit 1).
func fenced(op, id string, attempt int64, err error) error {
	return fmt.Errorf("%s %s attempt %d: %w", op, id, attempt, err)
}

// ClaimOptions is schedctl claim.
type ClaimOptions struct {
	IO      *cmdutil.Factory
	API     func() (cmdutil.API, error)
	Ctx     context.Context
	JSON    bool
	Request api.ClaimRequest
}

// NewCmdClaim builds schedctl claim.
func NewCmdClaim(f *cmdutil.Factory, runF func(*ClaimOptions) error) *cobra.Command {
	opts := &ClaimOptions{IO: f, API: f.API}
	var queue, workerID string
	var lease, wait time.Duration
	cmd := &cobra.Command{
		Use:   "claim --queue Q [--lease DUR] [--wait DUR]",
		Short: "Take one occurrence off a queue (low level)",
		Long: `Claim takes one occurrence of a queue under a visibility lease and prints it:
its occurrence_id, the attempt number to present with heartbeat, ack and nack,
lease_expires_at and the payload. With --wait it long-polls until one is
available.

When the queue has nothing, claim prints nothing and exits 1 with
"schedctl: nothing to claim", so a script can loop on it. For real work use
schedctl worker, which heartbeats and acks for you.`,
		Example: `  schedctl claim --queue reports --wait 30s -o json
  occ=$(schedctl claim --queue reports -o json) && id=$(echo "$occ" | jq -r .occurrence_id) &&
    schedctl ack "$id" --attempt "$(echo "$occ" | jq .attempt)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if queue == "" {
				return cmdutil.UsageErrorf("--queue is required")
			}
			if err := checkLease(lease); err != nil {
				return err
			}
			if wait < 0 || wait > client.MaxWait {
				return cmdutil.UsageErrorf("--wait %s: must be from 0 to %s", wait, client.MaxWait)
			}
			if workerID == "" {
				workerID = defaultWorkerID()
			}
			opts.Request = api.ClaimRequest{Queue: queue, WorkerID: workerID, Limit: 1, Lease: durString(lease), Wait: durString(wait)}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return claimRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&queue, "queue", "", "queue to claim from (required)")
	fl.DurationVar(&lease, "lease", 0, "visibility lease (default: schedd's, 30s)")
	fl.DurationVar(&wait, "wait", 0, "long-poll up to this long for an occurrence (at most 5m)")
	fl.StringVar(&workerID, "worker-id", "", "name of this worker in the attempt record (default HOSTNAME-PID)")
	return cmd
}

func claimRun(opts *ClaimOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.Claim(opts.Ctx, opts.Request)
	if err != nil {
		return fmt.Errorf("claim from %s: %w", opts.Request.Queue, err)
	}
	if len(res.Claimed) == 0 {
		return errNothingToClaim
	}
	cl := res.Claimed[0]
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, cl)
	}
	t := cmdutil.NewTable(opts.IO)
	t.Row("occurrence_id", cl.OccurrenceID)
	t.Row("attempt", strconv.FormatInt(cl.Attempt, 10))
	t.Row("lease_expires_at", cmdutil.TSV(cl.LeaseExpiresAt))
	t.Row("schedule_id", cl.ScheduleID)
	t.Row("schedule_version", strconv.FormatInt(cl.ScheduleVersion, 10))
	t.Row("scheduled_for", cmdutil.TSV(cl.ScheduledFor))
	t.Row("queue", cl.Queue)
	t.Row("payload", cmdutil.CompactJSON(cl.Payload))
	return t.Print()
}

// attemptFlag is the --attempt of heartbeat, ack and nack.
func attemptFlag(cmd *cobra.Command, n int64) error {
	if !cmd.Flags().Changed("attempt") {
		return cmdutil.UsageErrorf("--attempt is required: the attempt number claim printed")
	}
	if n < 1 {
		return cmdutil.UsageErrorf("--attempt %d: must be at least 1", n)
	}
	return nil
}

// HeartbeatOptions is schedctl heartbeat.
type HeartbeatOptions struct {
	IO      *cmdutil.Factory
	API     func() (cmdutil.API, error)
	Ctx     context.Context
	JSON    bool
	ID      string
	Request api.HeartbeatRequest
}

// NewCmdHeartbeat builds schedctl heartbeat.
func NewCmdHeartbeat(f *cmdutil.Factory, runF func(*HeartbeatOptions) error) *cobra.Command {
	opts := &HeartbeatOptions{IO: f, API: f.API}
	var lease time.Duration
	cmd := &cobra.Command{
		Use:   "heartbeat OCC --attempt N [--lease DUR]",
		Short: "Extend the lease of a claimed occurrence (low level)",
		Long: `Heartbeat extends the lease of attempt N of an occurrence and prints until
when it runs, and whether the worker should stop: superseded (the schedule
has a newer version) or canceled. A stale attempt (not the occurrence's
current one) is refused: exit 1, "stale attempt".`,
		Example: "  schedctl heartbeat occ_5kq2x7h3m4 --attempt 2\n  schedctl heartbeat occ_5kq2x7h3m4 --attempt 2 --lease 2m -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := attemptFlag(cmd, opts.Request.Attempt); err != nil {
				return err
			}
			if err := checkLease(lease); err != nil {
				return err
			}
			opts.Request.Lease = durString(lease)
			opts.ID, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return heartbeatRun(opts)
		},
	}
	cmd.Flags().Int64Var(&opts.Request.Attempt, "attempt", 0, "the attempt number claim printed (required)")
	cmd.Flags().DurationVar(&lease, "lease", 0, "new lease from now (default: schedd's, 30s)")
	return cmd
}

func heartbeatRun(opts *HeartbeatOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.Heartbeat(opts.Ctx, opts.ID, opts.Request)
	if err != nil {
		return fenced("heartbeat", opts.ID, opts.Request.Attempt, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	msg := "lease until " + cmdutil.TSV(res.LeaseExpiresAt)
	switch {
	case res.Canceled:
		msg += "; the schedule was canceled: stop"
	case res.Superseded:
		msg += "; the schedule has a newer version: stop"
	}
	_, err = fmt.Fprintln(opts.IO.Out, msg)
	return err
}

// AckOptions is schedctl ack.
type AckOptions struct {
	IO      *cmdutil.Factory
	API     func() (cmdutil.API, error)
	Ctx     context.Context
	JSON    bool
	ID      string
	Request api.AckRequest
}

// NewCmdAck builds schedctl ack.
func NewCmdAck(f *cmdutil.Factory, runF func(*AckOptions) error) *cobra.Command {
	opts := &AckOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "ack OCC --attempt N",
		Short: "Report a claimed occurrence done (low level)",
		Long: `Ack reports that attempt N of an occurrence succeeded. Acking the same
attempt again is harmless. A stale attempt (one whose lease ran out and whose
occurrence was delivered again) is refused: exit 1, "stale attempt".`,
		Example: "  schedctl ack occ_5kq2x7h3m4 --attempt 2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := attemptFlag(cmd, opts.Request.Attempt); err != nil {
				return err
			}
			opts.ID, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return ackRun(opts)
		},
	}
	cmd.Flags().Int64Var(&opts.Request.Attempt, "attempt", 0, "the attempt number claim printed (required)")
	return cmd
}

func ackRun(opts *AckOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	o, err := c.Ack(opts.Ctx, opts.ID, opts.Request)
	if err != nil {
		return fenced("ack", opts.ID, opts.Request.Attempt, err)
	}
	return occurrence.PrintOccurrence(opts.IO, opts.JSON, "acked", o)
}

// NackOptions is schedctl nack.
type NackOptions struct {
	IO      *cmdutil.Factory
	API     func() (cmdutil.API, error)
	Ctx     context.Context
	JSON    bool
	ID      string
	Request api.NackRequest
}

// NewCmdNack builds schedctl nack.
func NewCmdNack(f *cmdutil.Factory, runF func(*NackOptions) error) *cobra.Command {
	opts := &NackOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:   "nack OCC --attempt N --class retryable|permanent [--error MSG]",
		Short: "Report a claimed occurrence failed (low level)",
		Long: `Nack reports that attempt N of an occurrence failed. Class retryable retries
it later with exponential backoff while attempts, deadline and retry budget
last; class permanent sends it to the dead-letter queue now. A stale attempt
is refused: exit 1, "stale attempt".`,
		Example: `  schedctl nack occ_5kq2x7h3m4 --attempt 2 --class retryable --error 'upstream 503'
  schedctl nack occ_5kq2x7h3m4 --attempt 2 --class permanent --error 'no such customer'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := attemptFlag(cmd, opts.Request.Attempt); err != nil {
				return err
			}
			switch opts.Request.Class {
			case client.ClassRetryable, client.ClassPermanent:
			case "":
				return cmdutil.UsageErrorf("--class is required: retryable or permanent")
			default:
				return cmdutil.UsageErrorf("--class %q: want retryable or permanent", opts.Request.Class)
			}
			opts.ID, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return nackRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&opts.Request.Attempt, "attempt", 0, "the attempt number claim printed (required)")
	fl.StringVar(&opts.Request.Class, "class", "", "retryable or permanent (required)")
	fl.StringVar(&opts.Request.Error, "error", "", "what went wrong, kept with the attempt")
	return cmd
}

func nackRun(opts *NackOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	o, err := c.Nack(opts.Ctx, opts.ID, opts.Request)
	if err != nil {
		return fenced("nack", opts.ID, opts.Request.Attempt, err)
	}
	return occurrence.PrintOccurrence(opts.IO, opts.JSON, "nacked", o)
}
