//go:build faultinject

package faultinject

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Enabled reports whether this build has crash points.
const Enabled = true

var (
	once    sync.Once
	mu      sync.Mutex
	targets map[string]int // point -> the hit that kills
	hits    map[string]int
)

func load() {
	targets, hits = map[string]int{}, map[string]int{}
	for _, item := range strings.Split(os.Getenv("SCHED_CRASH_AT"), ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		point, n, ok := strings.Cut(item, ":")
		k, err := strconv.Atoi(n)
		if !ok || err != nil || k < 1 {
			fmt.Fprintf(os.Stderr, "faultinject: SCHED_CRASH_AT item %q is not POINT:N\n", item)
			os.Exit(2)
		}
		targets[point] = k
	}
}

// Crash kills the process with SIGKILL if this is the hit of point that
// SCHED_CRASH_AT names. No deferred function runs and nothing is flushed:
// exactly what a power cut to the process looks like to the database.
func Crash(point string) {
	once.Do(load)
	mu.Lock()
	k, ok := targets[point]
	if !ok {
		mu.Unlock()
		return
	}
	hits[point]++
	hit := hits[point] == k
	mu.Unlock()
	if hit {
		fmt.Fprintf(os.Stderr, "faultinject: crashing at %s:%d\n", point, k)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
