package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the client package is what workers and tools link; it
// reaches schedd only over the API and never links a store or the engine.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/jackc/pgx", "modernc.org/sqlite",
			"github.com/sched-dev/sched/internal/store", "github.com/sched-dev/sched/internal/engine",
			"github.com/sched-dev/sched/internal/server", "github.com/sched-dev/sched/internal/daemon",
			"github.com/spf13/cobra"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("the client links %s", dep)
			}
		}
	}
}
