// Package complete fills in flag values and arguments when a shell asks
// schedctl for completions (the hidden __complete command that the
// scripts of schedctl completion call): the zones of the tz database, the
// words of every flag that takes one of a few, and the names the daemon
// knows (schedules, targets, tenants, queues). Register wires it into the
// whole command tree by the names of flags and commands, so that a new
// command whose flags are named as the others' completes the same way
// with no line of its own.
package complete

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/timetable"
)

// Source is what completion asks the daemon: the methods of
// *client.Client it uses.
type Source interface {
	ListSchedules(ctx context.Context, o client.ListSchedulesOptions) (*api.ScheduleList, error)
	ListTargets(ctx context.Context) (*api.TargetList, error)
	ListTenants(ctx context.Context) (*api.TenantList, error)
}

// askTimeout bounds one question to the daemon: a shell waiting for
// completions must not hang on a daemon that does not answer.
const askTimeout = 2 * time.Second

// maxNames bounds the names offered from the daemon: a shell shows a
// screenful, and a longer list is a reason to type more of the name.
const maxNames = 1000

// Words of the flags that take one of a few. The schedule and
// occurrence states are the API's; --misfire's catch_up takes a count
// after its colon.
var (
	scheduleStates   = []string{"ACTIVE", "PAUSED", "CANCELED", "COMPLETED"}
	occurrenceStates = []string{"SCHEDULED", "ENQUEUED", "RUNNING", "SUCCEEDED", "RETRY_WAIT", "DEAD", "MISSED", "CANCELED", "SKIPPED_OVERLAP"}
	flagWords        = map[string][]string{
		"output":     {"table", "json"},
		"misfire":    {"skip", "fire_once", "catch_up:"},
		"overlap":    {"allow", "skip_if_running", "queue_one"},
		"dst-gap":    {"skip", "shift"},
		"dst-repeat": {"first", "last", "all"},
	}
)

// Register adds completions to every command under root: values for the
// flags named tz, state, queue, target, schedule, tenant and the words of
// flagWords; and schedule, target or tenant names as the argument of the
// commands that take one. connect reaches the daemon; when it cannot, a
// name is simply not completed.
func Register(root *cobra.Command, connect func() (Source, error)) {
	ask := func(f func(ctx context.Context, s Source) []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			s, err := connect()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), askTimeout)
			defer cancel()
			return matching(f(ctx, s), prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
	names := map[string]func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective){
		"schedule": ask(scheduleNames),
		"target":   ask(targetNames),
		"tenant":   ask(tenantNames),
		"queue":    ask(queueNames),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, words := range flagWords {
			if flagOf(c, name) {
				_ = c.RegisterFlagCompletionFunc(name, fixed(words))
			}
		}
		if flagOf(c, "tz") {
			_ = c.RegisterFlagCompletionFunc("tz", zones)
		}
		if flagOf(c, "state") {
			switch c.Name() {
			case "list":
				_ = c.RegisterFlagCompletionFunc("state", fixed(scheduleStates))
			case "occurrences":
				_ = c.RegisterFlagCompletionFunc("state", fixed(occurrenceStates))
			}
		}
		for flag, fn := range names {
			if flagOf(c, flag) {
				_ = c.RegisterFlagCompletionFunc(flag, fn)
			}
		}
		if arg := argumentOf(c); arg != "" && c.ValidArgsFunction == nil {
			fn := names[arg]
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp // one name, already given
				}
				return fn(cmd, args, prefix)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// flagOf reports whether c defines the flag name itself (a persistent
// flag is registered once, on the command that defines it).
func flagOf(c *cobra.Command, name string) bool {
	return c.LocalNonPersistentFlags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil
}

// argumentOf names what c's one argument is, by the command: a schedule
// for the verbs of one schedule, a target or a tenant for theirs; "" for
// the others.
func argumentOf(c *cobra.Command) string {
	parent := ""
	if c.HasParent() {
		parent = c.Parent().Name()
	}
	switch {
	case parent == "schedctl" && slices.Contains([]string{"get", "update", "pause", "resume", "cancel", "trigger"}, c.Name()):
		return "schedule"
	case parent == "target" && slices.Contains([]string{"get", "update", "delete", "test"}, c.Name()):
		return "target"
	case parent == "tenant" && slices.Contains([]string{"get", "update", "disable", "enable", "delete"}, c.Name()),
		parent == "token" && slices.Contains([]string{"create", "list", "revoke"}, c.Name()):
		return "tenant"
	}
	return ""
}

// fixed completes one of words.
func fixed(words []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return matching(words, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// zones completes a zone of the tz database in use, whatever the case
// typed (europe/ber: Europe/Berlin).
func zones(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	return matching(timetable.ZoneNames(), prefix), cobra.ShellCompDirectiveNoFileComp
}

// matching is the words that start with prefix, ignoring case, in order.
func matching(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if len(w) >= len(prefix) && strings.EqualFold(w[:len(prefix)], prefix) {
			out = append(out, w)
		}
	}
	return out
}

func scheduleNames(ctx context.Context, s Source) []string {
	l, err := s.ListSchedules(ctx, client.ListSchedulesOptions{Limit: maxNames})
	if err != nil {
		return nil
	}
	var out []string
	for _, sc := range l.Schedules {
		if sc.State != "CANCELED" {
			out = append(out, sc.Name)
		}
	}
	slices.Sort(out)
	return out
}

func targetNames(ctx context.Context, s Source) []string {
	l, err := s.ListTargets(ctx)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(l.Targets))
	for _, t := range l.Targets {
		out = append(out, t.Name)
	}
	return out
}

func tenantNames(ctx context.Context, s Source) []string {
	l, err := s.ListTenants(ctx)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(l.Tenants))
	for _, t := range l.Tenants {
		out = append(out, t.Name)
	}
	return out
}

// queueNames is the queues the tenant's schedules deliver to (a target's
// firings wait in a queue of its own, which is not offered).
func queueNames(ctx context.Context, s Source) []string {
	l, err := s.ListSchedules(ctx, client.ListSchedulesOptions{Limit: maxNames})
	if err != nil {
		return nil
	}
	var out []string
	for _, sc := range l.Schedules {
		if sc.Target == "" && sc.Queue != "" && !slices.Contains(out, sc.Queue) {
			out = append(out, sc.Queue)
		}
	}
	slices.Sort(out)
	return out
}
