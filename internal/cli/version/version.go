// Package version is schedctl version: the build's version, Go's, and the
// tz database's.
package version

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/timetable"
	"github.com/sched-dev/sched/internal/version"
)

// VersionOptions is schedctl version.
type VersionOptions struct {
	IO   *cmdutil.Factory
	JSON bool
}

// NewCmdVersion builds schedctl version.
func NewCmdVersion(f *cmdutil.Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f}
	return &cobra.Command{
		Use:     "version",
		Short:   "Print schedctl's version and the tz database in use",
		Example: "  schedctl version\n  schedctl version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *VersionOptions) error {
	f := opts.IO
	v := struct {
		Version   string `json:"version"`
		Go        string `json:"go"`
		TZVersion string `json:"tz_version"`
	}{f.Version, runtime.Version(), timetable.TZVersion()}
	if opts.JSON {
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(f.Out, version.Line("schedctl", v.Version))
	return err
}
