package schedule

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the package linkable by schedctl, which must not
// link the engine, a store or a database driver (cmd/schedctl's own test
// refuses them): the rules may use the time engine and the API's types,
// nothing of the daemon.
func TestDependencies(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/jackc/pgx", "modernc.org/sqlite",
			"github.com/sched-dev/sched/internal/store", "github.com/sched-dev/sched/internal/engine",
			"github.com/sched-dev/sched/internal/server", "github.com/sched-dev/sched/internal/daemon",
		} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("package schedule links %s", dep)
			}
		}
	}
}
