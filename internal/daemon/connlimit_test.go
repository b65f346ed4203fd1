package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A listener at its cap closes new connections at once; once some close,
// a new connection is served again. Through a real schedd (Run) on a real
// Unix socket and SQLite file.
func TestMaxConnectionsPerListener(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "sdc") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	cfg, err := ParseConfig([]string{"--store", "sqlite:" + filepath.Join(dir, "s.db"), "--listen", "unix:" + sock, "--max-connections", "5"},
		envOf("HOME", dir, "XDG_DATA_HOME", dir, "XDG_RUNTIME_DIR", dir), "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- Run(ctx, cfg, Options{Version: "v", Env: envOf("HOME", dir)}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	healthz := func() error {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second)) // a hang guard
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: sched\r\nConnection: close\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return errors.New(resp.Status)
		}
		return nil
	}
	for deadline := time.Now().Add(10 * time.Second); healthz() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("schedd did not come up: %v", healthz())
		}
	}

	// Five idle connections take the five slots: a request on each shows
	// it was accepted and is being served (and kept open). A refusal is
	// retried: the probes' connections may not all be closed yet.
	keepAlive := func() (net.Conn, error) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return nil, err
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: sched\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode != 200 {
			err = errors.New(resp.Status)
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		resp.Body.Close()
		return c, nil
	}
	var idle []net.Conn
	for deadline := time.Now().Add(5 * time.Second); len(idle) < 5; {
		c, err := keepAlive()
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("connection %d: %v", len(idle), err)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// The sixth is closed without an answer.
	if err := healthz(); err == nil {
		t.Fatal("a sixth connection was served past --max-connections 5")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the sixth connection was held, not closed: %v", err)
	}
	// Closing two frees their slots.
	idle[0].Close()
	idle[1].Close()
	var err2 error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err2 = healthz(); err2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection served after two closed: %v", err2)
		}
	}
}
