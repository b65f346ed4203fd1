package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// One client's connections cannot lock another out of a TCP listener:
// with the listener's cap at 6 and a client's share at 3, client A
// (127.0.0.2) opening as many keep-alive connections as the listener
// holds has 3 served and the others closed unanswered, counted as
// per_client; client B (127.0.0.1) is still answered; once A closes one,
// A is served again. Through a real schedd (Run) on a real TCP socket.
func TestMaxConnectionsPerClient(t *testing.T) {
	t.Parallel()
	d := startTLSDaemon(t, "--max-connections", "6", "--max-connections-per-client", "3") // plain TCP: no --tls-cert

	// request sends GET path on c (left open when keep is set) and reads
	// the answer; the deadline only guards against a hang.
	request := func(c net.Conn, path string, keep bool) (*http.Response, error) {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		head := "GET " + path + " HTTP/1.1\r\nHost: " + d.addr + "\r\nAuthorization: Bearer " + tlsToken + "\r\n"
		if !keep {
			head += "Connection: close\r\n"
		}
		if _, err := io.WriteString(c, head+"\r\n"); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return resp, fmt.Errorf("%s: %s", resp.Status, body)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	dial := func(ip string) net.Conn {
		t.Helper()
		dl := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		c, err := dl.Dial("tcp", d.addr)
		if err != nil {
			t.Fatalf("dial from %s: %v", ip, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	var idle []net.Conn
	for i := range 6 {
		c := dial("127.0.0.2")
		_, err := request(c, "/healthz", true)
		switch {
		case i < 3 && err != nil:
			t.Fatalf("A's connection %d, within its share: %v", i, err)
		case i >= 3 && err == nil:
			t.Fatalf("A's connection %d was served past its share of 3", i)
		case i >= 3:
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("A's connection %d was held, not closed: %v", i, err)
			}
		default:
			idle = append(idle, c)
		}
	}
	if _, err := request(dial("127.0.0.1"), "/v1/status", false); err != nil {
		t.Fatalf("B's request while A holds its share: %v", err)
	}
	// A's connections within its share are still served.
	if _, err := request(idle[2], "/healthz", true); err != nil {
		t.Fatalf("A's kept connection: %v", err)
	}
	resp, err := request(dial("127.0.0.1"), "/metrics", false)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	if want := `sched_connections_refused_total{reason="per_client"} 3`; !strings.Contains(string(raw), want) {
		t.Fatalf("/metrics has no %s:\n%s", want, raw)
	}

	// Closing one of A's frees a place in its share.
	idle[0].Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c := dial("127.0.0.2")
		if _, err := request(c, "/healthz", false); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("A not served after closing one of its connections: %v", err)
		}
	}
}
