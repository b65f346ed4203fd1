package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the CLI small and honest: it reaches the daemon only
// through the client package and never links a store driver.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/jackc/pgx", "modernc.org/sqlite", "github.com/sched-dev/sched/internal/store", "github.com/sched-dev/sched/internal/engine"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("schedctl links %s", dep)
			}
		}
	}
}
