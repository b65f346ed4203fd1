// Package testdaemon is test support: it waits for a daemon that a test
// started as a real process to serve, the same way in every package that
// starts one (cmd/schedd, internal/e2e, client).
package testdaemon

import (
	"testing"
	"time"
)

// Step is how often WaitServing asks whether the daemon serves.
const Step = 50 * time.Millisecond

// Proc is the process WaitServing waits for. Every field may be left zero.
type Proc struct {
	// Name names the process in failures, e.g. "schedd" or "schedd n1".
	Name string
	// Done is closed when the process has exited; nil: not watched.
	Done <-chan struct{}
	// Code is its exit status, read once Done is closed.
	Code func() int
	// Output is what it printed, shown when it fails to serve.
	Output func() string
}

// WaitServing calls serving every Step until it returns nil, and returns
// how long that took. It fails the test at once if the process exits first
// (it will never serve, and waiting on would only hide why), and after
// within with serving's last error. serving may fail the test itself when
// what answers is wrong rather than not ready.
func WaitServing(t testing.TB, p Proc, within time.Duration, serving func() error) time.Duration {
	t.Helper()
	name := p.Name
	if name == "" {
		name = "the daemon"
	}
	output := func() string {
		if p.Output == nil {
			return ""
		}
		return ":\n" + p.Output()
	}
	began := time.Now()
	end := began.Add(within)
	for {
		select {
		case <-p.Done: // a nil channel never is ready
			code := -1
			if p.Code != nil {
				code = p.Code()
			}
			t.Fatalf("%s exited with status %d before serving%s", name, code, output())
		default:
		}
		err := serving()
		if err == nil {
			return time.Since(began)
		}
		if time.Now().After(end) {
			t.Fatalf("%s did not serve within %v; last: %v%s", name, within, err, output())
		}
		time.Sleep(Step)
	}
}
