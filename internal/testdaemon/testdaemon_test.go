package testdaemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a failure instead of ending the
// test, so that WaitServing's failures can be checked. Its Fatalf unwinds
// WaitServing as the real one does (with a panic that run recovers).
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}

// run calls WaitServing with r and returns r's failure message ("" if none).
func run(r *recorder, p Proc, within time.Duration, serving func() error) (msg string) {
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
		msg = r.msg
	}()
	WaitServing(r, p, within, serving)
	return ""
}

// A real socket that starts listening a moment later: WaitServing returns
// once it accepts.
func TestWaitServingListener(t *testing.T) {
	dir, err := os.MkdirTemp("", "td")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s.sock")
	lnc := make(chan net.Listener, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Error(err)
		}
		lnc <- ln
	}()
	took := WaitServing(t, Proc{Name: "listener"}, 10*time.Second, func() error {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err
	})
	if ln := <-lnc; ln != nil {
		ln.Close()
	}
	if took < 150*time.Millisecond {
		t.Fatalf("returned after %v, before the socket listened", took)
	}
}

// A process that exits before serving fails the wait at once, not at the
// deadline; one that never serves fails it at the deadline.
func TestWaitServingFailures(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo dying; exit 3")
	out, err := cmd.Output()
	if err == nil {
		t.Fatal("sh did not fail")
	}
	done := make(chan struct{})
	close(done)
	p := Proc{Name: "sh", Done: done, Code: func() int { return cmd.ProcessState.ExitCode() }, Output: func() string { return string(out) }}
	began := time.Now()
	msg := run(&recorder{TB: t}, p, time.Minute, func() error { return errors.New("not yet") })
	if !strings.Contains(msg, "sh exited with status 3 before serving") || !strings.Contains(msg, "dying") || time.Since(began) > 10*time.Second {
		t.Fatalf("exited process: %q after %v", msg, time.Since(began))
	}
	msg = run(&recorder{TB: t}, Proc{}, 200*time.Millisecond, func() error { return errors.New("not yet") })
	if !strings.Contains(msg, "did not serve within 200ms; last: not yet") {
		t.Fatalf("never serving: %q", msg)
	}
}
