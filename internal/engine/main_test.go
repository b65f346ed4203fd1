package engine

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// childMain runs this test binary as a crash-test child process instead of
// the tests. It is set by init in crashchild_test.go, which only builds
// with the faultinject tag.
var childMain func() int

func TestMain(m *testing.M) {
	if childMain != nil && os.Getenv("SCHED_CRASH_CHILD") != "" {
		os.Exit(childMain())
	}
	goleak.VerifyTestMain(m)
}
