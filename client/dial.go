package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"github.com/sched-dev/sched/internal/peercred"
)

// DialError is a failure to reach schedd, or a refusal to talk to what
// answered at its address. Its message says what to do.
type DialError struct {
	Addr string // unix:PATH, tcp:HOST:PORT, ...
	Err  error
	// Untrusted is set when the client refused the socket or its peer
	// (wrong owner, not a socket, another user's daemon): nothing was sent.
	Untrusted bool
	hint      string
}

func (e *DialError) Error() string {
	msg := fmt.Sprintf("cannot connect to schedd at %s: %v", e.Addr, e.Err)
	if e.Untrusted {
		msg = fmt.Sprintf("refusing to talk to %s: %v", e.Addr, e.Err)
	}
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}

func (e *DialError) Unwrap() error { return e.Err }

// startHint is what a failed dial on the default socket says.
const startHint = "is schedd running? start it with: schedd"

// dialUnix connects to the socket, but only to a daemon of this user: the
// socket file must be a socket this user owns (checked before connecting,
// so nothing is written to an impostor's socket), and the process that
// accepted must run as this user (its peer credentials, checked after
// connecting, which also closes the race between the check and the
// connect). Where the OS cannot tell the peer's credentials, nothing is
// sent: the token must not go to whoever answers. The one exception is a
// socket another user shares with a group of this user (socketOwner):
// then the daemon must run as that user.
func (c *Client) dialUnix(ctx context.Context, _, _ string) (net.Conn, error) {
	addr := "unix:" + c.socket
	owner, err := c.socketOwner()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &DialError{Addr: addr, Err: fmt.Errorf("no socket at %s", c.socket), hint: c.hint()}
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, &DialError{Addr: addr, Err: err}
		}
		return nil, &DialError{Addr: addr, Err: err, Untrusted: true}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err
		}
		return nil, &DialError{Addr: addr, Err: err, hint: c.hint()}
	}
	uid, err := peercred.UID(conn.(*net.UnixConn))
	if err != nil {
		if errors.Is(err, peercred.ErrUnsupported) {
			err = fmt.Errorf("cannot verify who runs the server: %w; use tcp: or https: instead", err)
		}
		conn.Close()
		return nil, &DialError{Addr: addr, Err: err, Untrusted: true}
	}
	if uid != owner {
		conn.Close()
		err := fmt.Errorf("the server runs as uid %d, not as you (uid %d)", uid, os.Geteuid())
		if owner != os.Geteuid() {
			err = fmt.Errorf("the server runs as uid %d, not as the socket's owner (uid %d)", uid, owner)
		}
		return nil, &DialError{Addr: addr, Untrusted: true, Err: err}
	}
	return conn, nil
}

// dialTCP connects over TCP; a failure says where it tried.
func (c *Client) dialTCP(ctx context.Context, network, address string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, network, address)
	if err != nil && ctx.Err() == nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			err = oe.Err
		}
		return nil, &DialError{Addr: c.addr, Err: err, hint: c.hint()}
	}
	return conn, err
}

func (c *Client) hint() string {
	if c.defaultSocket {
		return startHint
	}
	return "is schedd listening there?"
}
