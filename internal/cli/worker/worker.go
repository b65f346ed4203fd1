// Package worker is the worker side of schedd: schedctl worker, which runs
// a command for each occurrence of a queue, and the low-level claim,
// heartbeat, ack and nack it is made of.
package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// WorkerOptions is schedctl worker.
type WorkerOptions struct {
	IO             *cmdutil.Factory
	Client         func() (*client.Client, error)
	Ctx            context.Context
	Queue          string
	WorkerID       string
	Concurrency    int
	Lease          time.Duration
	Wait           time.Duration
	PermanentCodes map[int]bool
	KillAfter      time.Duration // from SIGTERM to SIGKILL of a command told to stop
	Argv           []string
	// AllTenants makes the worker one of a pool shared by every tenant
	// (client.Worker.Pool); it needs an admin's credentials.
	AllTenants bool
	// Signals delivers SIGINT and SIGTERM; nil listens to this process's.
	Signals <-chan os.Signal
}

// NewCmdWorker builds schedctl worker.
func NewCmdWorker(f *cmdutil.Factory, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{IO: f, Client: f.Client}
	var codes []int
	cmd := &cobra.Command{
		Use:   "worker --queue Q [--concurrency N] [--lease DUR] [--permanent-exit-codes LIST] -- CMD [ARGS...]",
		Short: "Run a command for each occurrence of a queue",
		Long: `Worker claims occurrences of a queue and runs CMD once for each, at most
--concurrency at a time. CMD gets the payload on standard input and these
variables in its environment:

  SCHED_OCCURRENCE_ID   the occurrence; the same on every retry and redelivery:
                        deduplicate on it, delivery is at least once
  SCHED_SCHEDULE_ID     the schedule
  SCHED_SCHEDULE_VERSION  the schedule version that produced the occurrence
  SCHED_SCHEDULED_FOR   the firing time, RFC 3339 UTC
  SCHED_ATTEMPT         the attempt number, 1 on the first delivery
  SCHED_QUEUE           the queue
  SCHED_TENANT          the occurrence's tenant

While CMD runs, the worker renews its lease every lease/3. Exit status 0 acks
the occurrence; a status in --permanent-exit-codes (default 65, EX_DATAERR)
nacks it as permanent (to the dead-letter queue); any other failure nacks it
as retryable, with the exit status and the end of CMD's stderr as the error.

When a heartbeat says the schedule was superseded or canceled, or the lease is
lost, CMD gets SIGTERM (its process group does), then SIGKILL after
--kill-after.

SIGINT or SIGTERM drains: the worker stops claiming, waits for the running
commands, reports them, and exits 0. A second signal stops the running
commands too (they are nacked as retryable).

CMD's standard output and error go to the worker's; the worker logs what it
does on standard error.`,
		Example: `  schedctl worker --queue reports -- ./make-report.sh
  schedctl worker --queue mail --concurrency 8 --lease 2m -- python3 send.py
  schedctl worker --queue billing --permanent-exit-codes 65,78 -- sh -c 'jq -e .customer >/dev/null && bill'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("give the command to run after --, e.g. schedctl worker --queue q -- ./job.sh")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Queue == "" {
				return cmdutil.UsageErrorf("--queue is required")
			}
			if opts.Concurrency < 1 || opts.Concurrency > 1000 {
				return cmdutil.UsageErrorf("--concurrency %d: must be from 1 to 1000", opts.Concurrency)
			}
			if err := checkLease(opts.Lease); err != nil {
				return err
			}
			if opts.Wait < time.Second || opts.Wait > client.MaxWait {
				return cmdutil.UsageErrorf("--wait %s: must be from 1s to %s", opts.Wait, client.MaxWait)
			}
			if opts.KillAfter < 0 {
				return cmdutil.UsageErrorf("--kill-after %s: must not be negative", opts.KillAfter)
			}
			opts.PermanentCodes = map[int]bool{}
			for _, c := range codes {
				if c < 1 || c > 255 {
					return cmdutil.UsageErrorf("--permanent-exit-codes: %d is not an exit status from 1 to 255", c)
				}
				opts.PermanentCodes[c] = true
			}
			if _, err := exec.LookPath(args[0]); err != nil {
				return cmdutil.UsageErrorf("command %q: %v", args[0], unwrapExec(err))
			}
			if opts.WorkerID == "" {
				opts.WorkerID = defaultWorkerID()
			}
			opts.Argv, opts.Ctx = args, cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return workerRun(opts)
		},
	}
	fl := cmd.Flags()
	// Everything after CMD is CMD's: schedctl worker -q q ls -l works too.
	fl.SetInterspersed(false)
	fl.StringVar(&opts.Queue, "queue", "", "queue to work (required)")
	fl.IntVar(&opts.Concurrency, "concurrency", 1, "commands running at once")
	fl.DurationVar(&opts.Lease, "lease", client.DefaultLease, "visibility lease, renewed every lease/3 while CMD runs")
	fl.DurationVar(&opts.Wait, "wait", client.DefaultWait, "long poll of each claim")
	fl.IntSliceVar(&codes, "permanent-exit-codes", []int{65}, "exit statuses of CMD that nack as permanent, comma-separated")
	fl.DurationVar(&opts.KillAfter, "kill-after", 10*time.Second, "time a stopped command gets between SIGTERM and SIGKILL")
	fl.StringVar(&opts.WorkerID, "worker-id", "", "name of this worker in attempt records (default HOSTNAME-PID)")
	fl.BoolVar(&opts.AllTenants, "all-tenants", false, "work the queue of every tenant, shared by their weights (an admin's credentials: the Unix socket or an admin token)")
	return cmd
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

func workerRun(opts *WorkerOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	sigs := opts.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	stdout := &lockedWriter{w: opts.IO.Out}
	stderr := &lockedWriter{w: opts.IO.ErrOut}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	// soft ends claiming (a drain); hard also stops running commands.
	soft, stopSoft := context.WithCancel(opts.Ctx)
	defer stopSoft()
	hard, stopHard := context.WithCancel(context.WithoutCancel(opts.Ctx))
	defer stopHard()
	var running atomic.Int64
	done := make(chan struct{})
	defer close(done)
	go func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case s := <-sigs:
				if n == 0 {
					log.Info("draining: no more claims; waiting for running commands (signal again to stop them)", "signal", s.String(), "running", running.Load())
					stopSoft()
					continue
				}
				log.Info("stopping running commands", "signal", s.String())
				stopHard()
				return
			}
		}
	}()

	w := &client.Worker{
		Client: c, Queue: opts.Queue, WorkerID: opts.WorkerID, Concurrency: opts.Concurrency,
		Lease: opts.Lease, Wait: opts.Wait, Logger: log, Pool: opts.AllTenants,
		Handler: func(ctx context.Context, job *client.Job) error {
			running.Add(1)
			defer running.Add(-1)
			return runCommand(ctx, hard, opts, job, stdout, stderr)
		},
	}
	log.Info("worker started", "queue", opts.Queue, "worker_id", opts.WorkerID, "concurrency", opts.Concurrency,
		"addr", c.Addr(), "command", strings.Join(opts.Argv, " "))
	if err := w.Run(soft); err != nil {
		return err
	}
	log.Info("worker stopped")
	return nil
}

// stderrTail is how much of CMD's stderr a nack carries.
const stderrTail = 1024

// runCommand runs the worker's command for one job and turns how it ended
// into the handler's error: nil acks, Permanent nacks as permanent, any
// other error nacks as retryable.
func runCommand(ctx, hard context.Context, opts *WorkerOptions, job *client.Job, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(hard, func() { cancel(errors.New("schedctl was told to stop")) })()

	cmd := exec.CommandContext(ctx, opts.Argv[0], opts.Argv[1:]...)
	cmd.Env = append(os.Environ(),
		"SCHED_OCCURRENCE_ID="+job.OccurrenceID,
		"SCHED_SCHEDULE_ID="+job.ScheduleID,
		"SCHED_SCHEDULE_VERSION="+strconv.FormatInt(job.ScheduleVersion, 10),
		"SCHED_SCHEDULED_FOR="+job.ScheduledFor.UTC().Format(time.RFC3339),
		"SCHED_ATTEMPT="+strconv.FormatInt(job.Attempt, 10),
		"SCHED_QUEUE="+job.Queue,
		"SCHED_TENANT="+job.Tenant,
	)
	if p := bytes.TrimSpace(job.Payload); len(p) > 0 && string(p) != "null" {
		cmd.Stdin = bytes.NewReader(job.Payload)
	}
	tail := &tailBuffer{max: stderrTail}
	cmd.Stdout = stdout
	cmd.Stderr = io.MultiWriter(stderr, tail)
	// Its own process group: a Ctrl-C at the terminal reaches schedctl,
	// which drains, and not the commands it is waiting for; and a stop
	// reaches the command's children too.
	setProcessGroup(cmd)
	var finished atomic.Bool
	cmd.Cancel = func() error {
		signalGroup(cmd.Process, syscall.SIGTERM)
		time.AfterFunc(opts.KillAfter, func() {
			if !finished.Load() {
				signalGroup(cmd.Process, syscall.SIGKILL)
			}
		})
		return nil
	}
	// Children that keep CMD's stdout or stderr open must not hold the
	// worker forever.
	cmd.WaitDelay = opts.KillAfter + time.Second
	err := cmd.Run()
	finished.Store(true)
	ps := cmd.ProcessState
	if ps == nil {
		return fmt.Errorf("start %s: %w", opts.Argv[0], unwrapExec(err))
	}
	if ps.Success() {
		return nil // it finished its work, even if it was asked to stop
	}
	msg := "exit status " + strconv.Itoa(ps.ExitCode())
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		msg = "killed by signal " + ws.Signal().String()
	}
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		msg += " after it was told to stop (" + cause.Error() + ")"
	}
	if t := tail.String(); t != "" {
		msg += ": " + t
	}
	if ps.ExitCode() > 0 && opts.PermanentCodes[ps.ExitCode()] {
		return client.Permanent(errors.New(msg))
	}
	return errors.New(msg)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 2*t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the tail on one line: whole lines when it can, joined by " | ".
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	// Joined, the lines must still fit: drop whole lines from the front.
	for len(lines) > 1 && len(strings.Join(lines, " | ")) > t.max {
		lines = lines[1:]
	}
	return strings.Join(lines, " | ")
}

// lockedWriter serializes writes from concurrent commands and the log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
