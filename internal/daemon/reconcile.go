package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/output"
	"github.com/sched-dev/sched/internal/paths"
	"github.com/sched-dev/sched/internal/reconcile"
	"github.com/sched-dev/sched/internal/reconcile/report"
	"github.com/sched-dev/sched/internal/server"
	"github.com/sched-dev/sched/internal/store/sqlite"
)

const reconcileLong = `schedd reconcile audits a store without a daemon: for every schedule,
version by version, the firings its timetable promised in the range (by
default the last 24 hours up to now) against the occurrences the store
records. It prints a summary per schedule, then the firings absent and the
occurrences unexpected; docs/reconcile.md says what each class means.

On SQLite it refuses to run beside a schedd that holds the database (the
daemon's lock keeps every other process out): ask that daemon instead,
with schedctl reconcile. On PostgreSQL it reads beside running nodes.

The audit is bounded: it estimates the firings it would walk before it
walks any, and refuses past --max-firings (by default 20 times the API's
bound); raise it to audit a long range of frequent schedules at once.

Exit status, as diff's: 0 when every firing and occurrence is explained, 1
when something is absent or unexpected, 2 on bad flags, 3 when the audit
could not run (the reason is on stderr).`

const reconcileExamples = `  schedd reconcile --store sqlite:/var/lib/sched/sched.db
  schedd reconcile --store 'postgres://sched@db:5432/sched' --from 2027-03-13T00:00:00Z --to 2027-03-14T00:00:00Z -o json
  # from cron, mailing only a problem:
  schedd reconcile --store sqlite:/var/lib/sched/sched.db > /tmp/reconcile.txt || mail -s reconcile ops < /tmp/reconcile.txt`

// Reconcile is schedd reconcile: it audits the store --store names (a
// flag wins over SCHED_STORE) and prints the report on stdout, as a table
// or as JSON (the API's ReconcileReport). It returns the exit status.
//
// On SQLite the running daemon holds the database's lock for its whole
// life, and Reconcile takes it too, so it refuses to run beside a daemon
// (naming it) rather than open the file without the lock: a second
// process on the file would also run migrations and checkpoints on it,
// and the daemon can answer the same question itself (GET /v1/reconcile).
func Reconcile(args []string, env paths.Env, stdout, stderr io.Writer) int {
	var store, from, to, schedule, tenant string
	var maxFirings int
	cmd := newOfflineCommand("schedd reconcile", "Audit a store: expected firings against stored occurrences",
		reconcileLong, reconcileExamples, stdout)
	fs := cmd.Flags()
	fs.StringVar(&store, "store", "", "the store: `sqlite:PATH` or a postgres:// URL (optional schema=NAME parameter) (env SCHED_STORE)")
	fs.StringVar(&from, "from", "", "the range's `start`, RFC 3339 (default 24 hours before its end)")
	fs.StringVar(&to, "to", "", "the range's `end`, RFC 3339 (default now)")
	fs.StringVar(&schedule, "schedule", "", "one schedule, by id or `name`")
	fs.StringVar(&tenant, "tenant", "", "one `tenant` (default every tenant)")
	fs.IntVar(&maxFirings, "max-firings", reconcile.OfflineMaxFirings, "refuse an audit expected to walk more than `N` firings (the API's bound is "+strconv.Itoa(reconcile.DefaultMaxFirings)+")")
	run, err := cmd.parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: %v\n", err)
		return ExitUsage
	}
	if !run {
		return ExitOK // --help
	}
	format := cmd.output
	if !fs.Changed("store") {
		store = envOr(env, "SCHED_STORE", "")
	}
	var cfg Config
	if err := cfg.setStore(store, env); err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: %v\n", err)
		return ExitUsage
	}
	opt, err := server.ReconcileOptions(from, to, schedule, tenant, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: --%v\n", err)
		return ExitUsage
	}
	if maxFirings < 1 {
		fmt.Fprintf(stderr, "schedd reconcile: --max-firings %d: must be 1 or more\n", maxFirings)
		return ExitUsage
	}
	opt.MaxFirings = maxFirings
	if err := opt.Check(); err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: --%v\n", err)
		return ExitUsage
	}
	if cfg.PostgresDSN == "" {
		if _, err := os.Stat(cfg.StorePath); err != nil {
			fmt.Fprintf(stderr, "schedd reconcile: no database at %s: %v\n", cfg.StorePath, err)
			return ExitUsage
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	st, _, err := openStore(ctx, cfg)
	if errors.Is(err, sqlite.ErrInUse) {
		err = fmt.Errorf("%w; ask that daemon instead: schedctl reconcile", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: %s\n", oneLine(err.Error()))
		return ExitTrouble
	}
	defer st.Close()
	// The audit reads occurrence rows: the runs are folded first.
	if err := engine.FoldTenant(ctx, st, opt.TenantID); err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: %s\n", oneLine(err.Error()))
		return ExitTrouble
	}
	rep, err := reconcile.Report(ctx, st, opt)
	var in *reconcile.InputError
	switch {
	case errors.As(err, &in):
		fmt.Fprintf(stderr, "schedd reconcile: --%v\n", err)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "schedd reconcile: %s\n", oneLine(err.Error()))
		return ExitTrouble
	}
	if format == "json" {
		err = output.WriteJSON(stdout, rep)
	} else {
		f, ok := stdout.(*os.File)
		err = report.Write(output.Stream{Out: stdout, TTY: ok && term.IsTerminal(int(f.Fd()))}, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "schedd reconcile: %v\n", err)
		return ExitTrouble
	}
	if rep.Problem {
		return ExitFindings
	}
	return ExitOK
}
