package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/internal/spec"
)

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print schedctl's version and the tz database in use",
		Example: "  schedctl version\n  schedctl version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := struct {
				Version   string `json:"version"`
				Go        string `json:"go"`
				TZVersion string `json:"tz_version"`
			}{f.Version, runtime.Version(), spec.TZVersion()}
			if f.output == outJSON {
				enc := json.NewEncoder(f.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			_, err := fmt.Fprintf(f.Out, "schedctl %s (%s), tz database %s\n", v.Version, v.Go, v.TZVersion)
			return err
		},
	}
}
