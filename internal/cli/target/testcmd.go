package target

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
)

// TestOptions is schedctl target test.
type TestOptions struct {
	Options
	Name string
}

// NewCmdTest builds schedctl target test.
func NewCmdTest(f *cmdutil.Factory, runF func(*TestOptions) error) *cobra.Command {
	opts := &TestOptions{Options: Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Send a test firing to a target and say how it went",
		Long: `Test has schedd deliver one test firing to the target NAME now, as a
webhook provider's "send test event" does: a webhook is sent a signed POST
whose body is {"test":true}, a nats target a message on its subject. It
is sent once, never retried, and stored nowhere; its occurrence id
(test_...) names no occurrence.

It prints "delivered", or "not delivered (permanent): ERROR" for a refusal
a retry would not change (a webhook's 4xx), or "not delivered (will be
retried): ERROR" for one a firing's delivery would retry (a 5xx, 429 or a
network error), with the wait the target asked for (retry after) when it
asked for one; then the test occurrence id. JSON output is one object:
delivered, permanent, error, retry_after_seconds, occurrence_id.

Exit status: 0 when delivered; 1 when not (the output says why), as for
any other failure; 2 for invalid input.`,
		Example: `  schedctl target test billing
  schedctl target test billing -o json | jq -r .error`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return testRun(opts)
		},
	}
	return cmd
}

func testRun(opts *TestOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	what := "target test " + opts.Name
	res, err := c.TestTarget(opts.Ctx, opts.Name)
	if err != nil {
		return wrapErr(what, err)
	}
	if opts.JSON {
		err = cmdutil.WriteJSON(opts.IO.Out, res)
	} else {
		err = printTest(opts.IO, res)
	}
	if err != nil {
		return err
	}
	return notDeliveredError(what, res)
}

// notDeliveredError is the error that makes a test's exit status 1 when
// the firing was not delivered (the output already says why, so it prints
// nothing more), nil when it was.
func notDeliveredError(what string, res *api.TargetTest) error {
	if res.Delivered {
		return nil
	}
	return &cmdutil.StatusError{Status: cmdutil.ExitFailure, Silent: true,
		Err: fmt.Errorf("%s: %w: %s", what, errNotDelivered, res.Error)}
}

var errNotDelivered = errors.New("not delivered")

// printTest prints how a test firing's delivery went, then its id.
func printTest(f *cmdutil.Factory, res *api.TargetTest) error {
	line := "delivered"
	if !res.Delivered {
		how := "will be retried"
		if res.Permanent {
			how = "permanent"
		}
		line = fmt.Sprintf("not delivered (%s): %s", how, cmdutil.Cell(res.Error))
		if res.RetryAfterSeconds > 0 {
			d := time.Duration(res.RetryAfterSeconds * float64(time.Second))
			line += fmt.Sprintf(" (retry after %s)", cmdutil.Short(d))
		}
	}
	_, err := fmt.Fprintf(f.Out, "%s\ntest occurrence: %s\n", line, cmdutil.Cell(res.OccurrenceID))
	return err
}
