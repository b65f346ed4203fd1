package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the daemon apart from the CLI: schedd links no
// package of schedctl's (internal/cli and below); what both print alike
// (tables, a reconcile report) lives in packages of its own.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/sched-dev/sched/internal/cli" || strings.HasPrefix(dep, "github.com/sched-dev/sched/internal/cli/") {
			t.Errorf("schedd links %s", dep)
		}
	}
}
