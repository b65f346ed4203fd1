// Package audit is schedctl audit: the audit log of who changed which
// schedule, tenant or token, when, and from which version to which.
package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// API is what the command needs of schedd.
type API interface {
	Audit(ctx context.Context, o client.AuditOptions) (*api.AuditList, error)
}

// AuditOptions is schedctl audit.
type AuditOptions struct {
	IO   *cmdutil.Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool

	Schedule string
	Since    string // RFC 3339, or a duration ago (24h, 7d)
	Tenant   string
	Paging   cmdutil.PageFlags
}

// NewCmdAudit builds schedctl audit.
func NewCmdAudit(f *cmdutil.Factory, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{IO: f, API: func() (API, error) { return f.Client() }}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log: who changed what, and when",
		Long: `Audit shows the audit log, oldest first: every change of a schedule
(create, update, pause, resume, cancel, trigger), of the dead-letter queue
(replay, purge), of a simulated outage, and of a tenant or a token, with
who made it (the tenant and token name of the request; "local" for the
daemon's Unix socket), the target and its version before and after. A
bulk create (import, apply) that makes several schedules is one entry,
schedule.create_batch, whose target is the range of their ids
(FIRST..LAST); --schedule shows it among that schedule's changes.

A tenant's token reads its own tenant's log; an admin's may name another
tenant with --tenant, or --tenant '*' for every tenant. --since takes an
RFC 3339 time or a duration meaning that long ago (90m, 24h, 7d).

JSON output is an array of entries (one page, or every one with --all;
when more exist the footer, with the next page's token, goes to stderr).`,
		Example: "  schedctl audit\n  schedctl audit --schedule nightly --since 24h\n" +
			"  schedctl audit --tenant '*' --since 2027-03-01T00:00:00Z --all -o json | jq -r '.[] | [.at, .actor.token, .action] | @tsv'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Paging.Check(); err != nil {
				return err
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return auditRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Schedule, "schedule", "", "only the changes of this schedule (id or `name`)")
	fl.StringVar(&opts.Since, "since", "", "only changes at or after this `time`: RFC 3339, or a duration ago such as 24h or 7d")
	fl.StringVar(&opts.Tenant, "tenant", "", "another `tenant`'s log, or '*' for every tenant's (admin tokens only)")
	opts.Paging.Register(fl, "entries", false)
	return cmd
}

// ParseSince reads --since at now: an RFC 3339 time, or a duration (Go's,
// or whole days such as 7d) before now.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		n, derr := strconv.Atoi(days)
		if derr == nil && n >= 0 && n <= 100*365 {
			d, err = time.Duration(n)*24*time.Hour, nil
		}
	}
	if err != nil || d < 0 {
		return time.Time{}, cmdutil.UsageErrorf("--since %q: want an RFC 3339 time such as 2027-03-14T07:00:00Z or a duration ago such as 24h or 7d", s)
	}
	return now.Add(-d), nil
}

func auditRun(opts *AuditOptions) error {
	f := opts.IO
	o := client.AuditOptions{Schedule: opts.Schedule, Tenant: opts.Tenant, Limit: opts.Paging.Limit}
	if opts.Since != "" {
		t, err := ParseSince(opts.Since, f.Now())
		if err != nil {
			return err
		}
		o.Since = t
	}
	if opts.Paging.Page != "" {
		n, err := strconv.ParseInt(opts.Paging.Page, 10, 64)
		if err != nil || n < 0 {
			return cmdutil.UsageErrorf("--page %q: want the token a footer gave", opts.Paging.Page)
		}
		opts.Paging.Page = strconv.FormatInt(n, 10)
	}
	c, err := opts.API()
	if err != nil {
		return err
	}
	rows, next, err := cmdutil.FetchPages(opts.Ctx, opts.Paging, func(ctx context.Context, page string) ([]api.AuditEntry, string, error) {
		q := o
		q.AfterID, _ = strconv.ParseInt(page, 10, 64)
		l, err := c.Audit(ctx, q)
		if err != nil {
			return nil, "", err
		}
		if l.NextAfter == 0 {
			return l.Entries, "", nil
		}
		return l.Entries, strconv.FormatInt(l.NextAfter, 10), nil
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if opts.JSON {
		return cmdutil.WriteJSONPage(f, rows, "entry", "entries", next)
	}
	if len(rows) == 0 && f.IsTTY {
		_, err := fmt.Fprintln(f.Out, "No changes recorded.")
		return err
	}
	t := cmdutil.NewTable(f, "TIME", "ACTOR", "ACTION", "TARGET", "VERSION", "DETAIL")
	for _, e := range rows {
		t.Row(cmdutil.TSV(e.At), Actor(e.Actor), e.Action, cmdutil.Cell(e.Target), Version(e.OldVersion, e.NewVersion),
			cmdutil.Cell(e.Detail))
	}
	if err := t.Print(); err != nil {
		return err
	}
	return cmdutil.PrintMore(f, false, "entry", "entries", len(rows), next)
}

// Actor is who made a change, as the table shows it: tenant/token, with
// "local" for the Unix socket without a token and "(admin)" for an
// admin's token.
func Actor(a api.AuditActor) string {
	switch {
	case a.Local && a.Token == "":
		return a.Tenant + "/local"
	case a.Admin:
		return a.Tenant + "/" + a.Token + " (admin)"
	}
	return a.Tenant + "/" + a.Token
}

// Version is a change's versions as old->new; "-" when the target has
// none.
func Version(old, new int64) string {
	if old == 0 && new == 0 {
		return "-"
	}
	return fmt.Sprintf("%d->%d", old, new)
}
