package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/sched-dev/sched/internal/paths"
)

// sdNotify sends state (e.g. "READY=1") to the service manager, systemd's
// sd_notify protocol: one datagram to the Unix socket named in
// $NOTIFY_SOCKET, a path or an abstract socket name written with a leading
// '@'. It does nothing when the variable is unset or empty, as when schedd
// does not run under a Type=notify unit (packaging/systemd/schedd.service).
func sdNotify(env paths.Env, state string) error {
	name, _ := env("NOTIFY_SOCKET")
	if name == "" {
		return nil
	}
	if !strings.HasPrefix(name, "/") && !strings.HasPrefix(name, "@") {
		return fmt.Errorf("NOTIFY_SOCKET=%q: want a socket path or an abstract name (@...)", name)
	}
	if name[0] == '@' {
		// The abstract namespace: a name whose first byte is NUL.
		name = "\x00" + name[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	return nil
}

// notifyReady tells the service manager that schedd serves: its store is
// open, the engine runs and every listener accepts.
func notifyReady(env paths.Env, log *slog.Logger) { notify(env, log, "READY=1") }

// notifyStopping tells the service manager that schedd has begun to shut
// down (systemd then shows it "deactivating" rather than failed).
func notifyStopping(env paths.Env, log *slog.Logger) { notify(env, log, "STOPPING=1") }

func notify(env paths.Env, log *slog.Logger, state string) {
	if err := sdNotify(env, state); err != nil {
		log.Warn("cannot notify the service manager", "err", err)
	}
}
