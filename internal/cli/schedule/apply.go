package schedule

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

const fileFormatHelp = `The file lists schedules by name; the fields are those of the API:

  schedules:
    - name: nightly-report        # the key: unique, matched by name
      queue: reports
      cron: "0 2 * * *"           # or at: RFC 3339, or every: 15m
      time_zone: Europe/Berlin    # required with cron; UTC otherwise
      payload: {format: pdf}      # any YAML value, sent as JSON
      misfire_policy: catch_up:3  # skip | fire_once | catch_up:K
      max_lateness: 5m
      overlap_policy: skip_if_running
      # also: anchor, dst_gap, dst_repeat, flexible_window,
      #       max_attempts, retry_base, retry_cap, retry_deadline

An unknown field is an error. Settings left out take schedd's defaults, and a
schedule compares equal to a live one whose settings are those defaults.`

// ApplyOptions is schedctl apply, diff and validate.
type ApplyOptions struct {
	IO   *cmdutil.Factory
	API  func() (cmdutil.API, error)
	Ctx  context.Context
	JSON bool
	File string
}

// planned is what apply does, or did, for one schedule of the file.
type planned struct {
	Name       string   `json:"name"`
	Action     string   `json:"action"` // diff: create, update, none; apply: created, updated, unchanged
	ScheduleID string   `json:"schedule_id"`
	Version    int64    `json:"version"`
	Changes    []change `json:"changes"`

	entry fileEntry
}

func fileCmd(f *cmdutil.Factory, use string, runF func(*ApplyOptions) error, run func(*ApplyOptions) error) (*cobra.Command, *ApplyOptions) {
	opts := &ApplyOptions{IO: f, API: f.API}
	cmd := &cobra.Command{
		Use:  use + " -f FILE",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.File == "" {
				return cmdutil.UsageErrorf("-f FILE is required (- reads standard input)")
			}
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return run(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.File, "file", "f", "", "YAML file of schedules (- reads standard input)")
	return cmd, opts
}

// NewCmdValidate builds schedctl validate.
func NewCmdValidate(f *cmdutil.Factory, runF func(*ApplyOptions) error) *cobra.Command {
	cmd, _ := fileCmd(f, "validate", runF, validateRun)
	cmd.Short = "Check a file of schedules offline"
	cmd.Long = `Validate checks a schedules file without a daemon, with the rules schedd
applies: every field, cron expression, zone and policy. It stops at the first
bad schedule and names it and the field; the exit status is then 2. Use it in
CI before apply.

` + fileFormatHelp
	cmd.Example = "  schedctl validate -f schedules.yaml\n  git show HEAD:schedules.yaml | schedctl validate -f -"
	return cmd
}

func validateRun(opts *ApplyOptions) error {
	entries, err := readScheduleFile(opts.File, opts.IO.In)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Request.Name
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, struct {
			File      string   `json:"file"`
			Valid     bool     `json:"valid"`
			Schedules []string `json:"schedules"`
		}{opts.File, true, names})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s: %s, valid\n", opts.File, cmdutil.Plural(len(entries), "schedule", "schedules"))
	return err
}

// NewCmdDiff builds schedctl diff.
func NewCmdDiff(f *cmdutil.Factory, runF func(*ApplyOptions) error) *cobra.Command {
	cmd, _ := fileCmd(f, "diff", runF, diffRun)
	cmd.Short = "Show what apply would change"
	cmd.Long = `Diff compares a schedules file with schedd and prints what apply would do:
the schedules it would create, and for those it would update, each field that
differs. Schedules that are not in the file are not shown: apply leaves them
alone.

Exit status (like diff(1) and kubectl diff): 0 when apply would change
nothing (and it says so), 1 when it would change something (the plan is the
output; no error line), 2 when the file or a flag is invalid, and 3 on any
other error (schedd unreachable, a refused request), so that 1 always means
"differences".

` + fileFormatHelp
	cmd.Example = "  schedctl diff -f schedules.yaml\n  schedctl diff -f schedules.yaml -o json | jq '.[] | select(.action != \"none\")'\n" +
		"  if schedctl diff -f schedules.yaml > plan.txt; then echo in sync; elif [ $? -eq 1 ]; then schedctl apply -f schedules.yaml; fi"
	return cmd
}

// diffRun prints the plan. Its error is a StatusError: silent with status
// 1 when there are differences; otherwise invalid input keeps status 2 and
// any other error gets status 3.
func diffRun(opts *ApplyOptions) error {
	return cmdutil.FindingsError(diffPlan(opts))
}

// loadPlan reads the file and compares it with the daemon's schedules:
// what diff shows and apply carries out.
func loadPlan(opts *ApplyOptions) ([]planned, cmdutil.API, error) {
	entries, err := readScheduleFile(opts.File, opts.IO.In)
	if err != nil {
		return nil, nil, &cmdutil.UsageError{Err: err}
	}
	c, err := opts.API()
	if err != nil {
		return nil, nil, err
	}
	plan, err := makePlan(opts.Ctx, c, entries)
	if err != nil {
		return nil, nil, err
	}
	return plan, c, nil
}

func diffPlan(opts *ApplyOptions) error {
	plan, _, err := loadPlan(opts)
	if err != nil {
		return err
	}
	n := 0
	for _, p := range plan {
		if p.Action != "none" {
			n++
		}
	}
	if opts.JSON {
		if err := cmdutil.WriteJSON(opts.IO.Out, plan); err != nil {
			return err
		}
	} else if err := printPlan(opts, plan, n); err != nil {
		return err
	}
	if n > 0 {
		return &cmdutil.StatusError{Status: cmdutil.ExitFailure, Silent: true,
			Err: fmt.Errorf("%s would change; run schedctl apply -f %s", cmdutil.Plural(n, "schedule", "schedules"), opts.File)}
	}
	return nil
}

func printPlan(opts *ApplyOptions, plan []planned, n int) error {
	w := opts.IO.Out
	if n == 0 {
		_, err := fmt.Fprintf(w, "No changes: %s in %s match schedd.\n", cmdutil.Plural(len(plan), "schedule", "schedules"), opts.File)
		return err
	}
	creates, updates := 0, 0
	for _, p := range plan {
		switch p.Action {
		case "create":
			creates++
			r := p.entry.Request
			fmt.Fprintf(w, "+ create %s (%s %s, queue %s)\n", cmdutil.Cell(p.Name), p.entry.Norm.Kind, cmdutil.Cell(p.entry.Norm.Expr), cmdutil.Cell(r.Queue))
		case "update":
			updates++
			fmt.Fprintf(w, "~ update %s (%s, version %d)\n", cmdutil.Cell(p.Name), p.ScheduleID, p.Version)
			for _, c := range p.Changes {
				fmt.Fprintf(w, "    %s: %s -> %s\n", c.Field, shown(c.From), shown(c.To))
			}
		}
	}
	_, err := fmt.Fprintf(w, "%d to create, %d to update, %d unchanged\n", creates, updates, len(plan)-creates-updates)
	return err
}

func shown(s string) string {
	if s == "" {
		return "(none)"
	}
	return cmdutil.Cell(s)
}

// makePlan compares each schedule of the file with the live one of the
// same name.
func makePlan(ctx context.Context, c cmdutil.API, entries []fileEntry) ([]planned, error) {
	plan := make([]planned, 0, len(entries))
	for _, e := range entries {
		p := planned{Name: e.Request.Name, Changes: []change{}, entry: e}
		sc, err := c.GetSchedule(ctx, e.Request.Name)
		switch {
		case client.IsNotFound(err), err == nil && sc.State == "CANCELED":
			// A canceled schedule still answers to its name, but the
			// name is free: the file's schedule is a new one.
			p.Action = "create"
			p.Changes = append(p.Changes, liveless(e.Norm)...)
		case err != nil:
			return nil, fmt.Errorf("get %s: %w", e.Request.Name, err)
		case sc.Name != e.Request.Name:
			return nil, fmt.Errorf("schedule %q: schedd answered with schedule %s named %q; a name must not look like a schedule id", e.Request.Name, sc.ScheduleID, sc.Name)
		default:
			p.ScheduleID, p.Version = sc.ScheduleID, sc.Version
			p.Action = "none"
			if ch := diffSchedules(fromLive(*sc), e.Norm); len(ch) > 0 {
				p.Action, p.Changes = "update", ch
			}
		}
		plan = append(plan, p)
	}
	return plan, nil
}

// liveless lists a new schedule's settings as changes from nothing.
func liveless(s *normalForm) []change {
	var out []change
	for _, c := range s.fields() {
		if c.To != "" && c.Field != "kind" {
			out = append(out, change{Field: c.Field, To: c.To})
		}
	}
	return out
}

// NewCmdApply builds schedctl apply.
func NewCmdApply(f *cmdutil.Factory, runF func(*ApplyOptions) error) *cobra.Command {
	cmd, _ := fileCmd(f, "apply", runF, applyRun)
	cmd.Short = "Create and update schedules from a file"
	cmd.Long = `Apply makes schedd match a schedules file: it creates the schedules of the file
that do not exist (by name), updates those whose settings differ (only those:
each update bumps that schedule's version), and leaves the others alone.
Applying the same file twice changes nothing. Schedules that are not in the
file are not touched; apply does not pause, resume or cancel.

The file is validated first, offline; nothing is sent if any schedule is
invalid (exit 2). The new schedules are created together, up to 1000 a
request (POST /v1/schedules:batch); apply then reports them in file order and
stops at the first schedule schedd refused (no update after it is made).

` + fileFormatHelp
	cmd.Example = "  schedctl validate -f schedules.yaml && schedctl diff -f schedules.yaml; schedctl apply -f schedules.yaml\n  schedctl apply -f schedules.yaml -o json"
	return cmd
}

func applyRun(opts *ApplyOptions) error {
	plan, c, err := loadPlan(opts)
	if err != nil {
		return err
	}
	done := make([]planned, 0, len(plan))
	created, applyErr := createPlanned(opts.Ctx, c, plan)
	for i, p := range plan {
		if applyErr != nil {
			break
		}
		switch p.Action {
		case "create":
			res := created[i]
			if err := client.ItemError(res); err != nil {
				applyErr = fmt.Errorf("create %s: %w", p.Name, err)
				break
			}
			p.Action, p.ScheduleID, p.Version = "created", res.Schedule.ScheduleID, res.Schedule.Version
		case "update":
			res, err := c.UpdateSchedule(opts.Ctx, p.ScheduleID, p.entry.Request)
			if err != nil {
				applyErr = fmt.Errorf("update %s: %w", p.Name, err)
				break
			}
			p.Action, p.Version = "updated", res.Schedule.Version
		default:
			p.Action = "unchanged"
		}
		if applyErr != nil {
			break
		}
		done = append(done, p)
		if !opts.JSON {
			printApplied(opts.IO, p)
		}
	}
	if opts.JSON {
		if err := cmdutil.WriteJSON(opts.IO.Out, done); err != nil {
			return err
		}
	} else if applyErr == nil {
		counts := map[string]int{}
		for _, p := range done {
			counts[p.Action]++
		}
		fmt.Fprintf(opts.IO.Out, "%d created, %d updated, %d unchanged\n", counts["created"], counts["updated"], counts["unchanged"])
	}
	return applyErr
}

// createPlanned creates the plan's new schedules through the bulk create,
// api.MaxBatchItems a request, and returns each one's result by its index
// in the plan. An error is a request that failed as a whole.
func createPlanned(ctx context.Context, c cmdutil.API, plan []planned) (map[int]api.BatchItemResult, error) {
	out := map[int]api.BatchItemResult{}
	var items []api.BatchItem
	var at []int // items[k] is plan[at[k]]
	flush := func() error {
		if len(items) == 0 {
			return nil
		}
		res, err := c.CreateSchedules(ctx, items)
		if err != nil {
			return fmt.Errorf("create %s: %w", cmdutil.Plural(len(items), "schedule", "schedules"), err)
		}
		if len(res.Items) != len(items) {
			return fmt.Errorf("create: schedd answered %d results for %d schedules", len(res.Items), len(items))
		}
		for k, r := range res.Items {
			out[at[k]] = r
		}
		items, at = items[:0], at[:0]
		return nil
	}
	for i, p := range plan {
		if p.Action != "create" {
			continue
		}
		items = append(items, api.BatchItem{Schedule: p.entry.Request})
		at = append(at, i)
		if len(items) == api.MaxBatchItems {
			if err := flush(); err != nil {
				return out, err
			}
		}
	}
	return out, flush()
}

func printApplied(f *cmdutil.Factory, p planned) {
	switch p.Action {
	case "created":
		fmt.Fprintf(f.Out, "created %s (%s, version %d)\n", cmdutil.Cell(p.Name), p.ScheduleID, p.Version)
	case "updated":
		fields := make([]string, len(p.Changes))
		for i, c := range p.Changes {
			fields[i] = c.Field
		}
		fmt.Fprintf(f.Out, "updated %s (%s, version %d): %s\n", cmdutil.Cell(p.Name), p.ScheduleID, p.Version, strings.Join(fields, ", "))
	default:
		fmt.Fprintf(f.Out, "unchanged %s (%s, version %d)\n", cmdutil.Cell(p.Name), p.ScheduleID, p.Version)
	}
}
