package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/sched-dev/sched/internal/paths"
	"github.com/sched-dev/sched/internal/peercred"
)

// SocketGroup is the group whose members schedd serves on its Unix
// sockets as it serves its own user (--socket-group): without a token, as
// an admin of the default tenant, on every route. Off by default; see
// docs/security.md.
//
// Membership is read from the peer's credentials as the kernel recorded
// them at connect time (peercred.Get: the primary group from SO_PEERCRED,
// the supplementary ones from SO_PEERGROUPS), not from /proc/PID/status,
// which describes whatever process holds that pid when it is read (the
// peer may have exited, or dropped the group, since), and not from the
// group database (os/user), which would serve a process that dropped its
// groups on purpose (a sandboxed job of a member) and miss groups only a
// login session holds. They are the credentials the kernel itself checked
// against the socket file's group and mode at connect.
type SocketGroup struct {
	Name string // as given
	GID  int
}

// lookupSocketGroup reads --socket-group: a group's name, or its numeric
// id; one the system does not know is refused, naming it.
func lookupSocketGroup(name string) (*SocketGroup, error) {
	if name == "" {
		return nil, usage("--socket-group: give the name of a group")
	}
	g, err := user.LookupGroup(name)
	var unknown user.UnknownGroupError
	if errors.As(err, &unknown) {
		if _, nerr := strconv.Atoi(name); nerr == nil {
			g, err = user.LookupGroupId(name)
		}
	}
	var unknownID user.UnknownGroupIdError
	switch {
	case errors.As(err, &unknown), errors.As(err, &unknownID):
		return nil, usage("--socket-group %q: no such group on this system", name)
	case err != nil:
		return nil, usage("--socket-group %q: %v", name, err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return nil, usage("--socket-group %q: group id %q is not a number", name, g.Gid)
	}
	return &SocketGroup{Name: name, GID: gid}, nil
}

// setSocketGroup resolves --socket-group and applies it to the sockets of
// the unix:PATH listeners. The default socket stays private: its
// directory is this user's alone, so no member could reach it.
func setSocketGroup(cfg *Config, name string) error {
	g, err := lookupSocketGroup(name)
	if err != nil {
		return err
	}
	shared := 0
	for i, l := range cfg.Listen {
		if l.Network == "unix" && !l.Default {
			cfg.Listen[i].Group = g
			shared++
		}
	}
	if shared == 0 {
		return usage("--socket-group %s: no socket to share; give one with --listen unix:PATH in a directory the group can enter (the default socket's directory is private to schedd's user)", name)
	}
	cfg.SocketGroup = g
	return nil
}

// prepareGroupDir makes sure that members of g can reach a socket in dir
// and that no one but schedd's user and root could put one there (else
// schedctl would refuse it: paths.CheckSharedDir). A missing dir is
// created (not its parents), mode 0750 and group-owned by g.
func prepareGroupDir(dir string, g *SocketGroup, log *slog.Logger) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, 0o750); err != nil {
			return fmt.Errorf("socket directory: %w (create its parent, or have systemd's RuntimeDirectory= make it)", err)
		}
		// The umask (0077) took the group's bits off.
		if err := os.Chmod(dir, 0o750); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		if err := os.Chown(dir, -1, g.GID); err != nil {
			return fmt.Errorf("socket directory %s: chgrp %s: %w", dir, g.Name, err)
		}
	}
	if err := paths.CheckSharedDir(dir, os.Geteuid()); err != nil {
		return fmt.Errorf("--socket-group: the socket's directory: %w; schedctl would refuse a socket there", err)
	}
	if fi, err := os.Stat(dir); err == nil && !canEnter(fi, g.GID) {
		log.Warn("members of the socket group cannot enter the socket's directory", "dir", dir, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()), "group", g.Name)
	}
	return nil
}

// canEnter reports whether a member of gid who is not the owner may
// enter the directory fi describes.
func canEnter(fi fs.FileInfo, gid int) bool {
	perm := fi.Mode().Perm()
	if perm&0o001 != 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Gid) == gid && perm&0o010 != 0
}

// shareSocket makes the socket at path group-owned by g, mode 0660. It
// was created 0600, so it is never open wider than that for a moment.
func shareSocket(path string, g *SocketGroup) error {
	if err := os.Chown(path, -1, g.GID); err != nil {
		return fmt.Errorf("--socket-group %s: chgrp %s: %w (schedd's user must be a member of the group, or root)", g.Name, path, err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		return fmt.Errorf("chmod 0660 %s: %w", path, err)
	}
	return nil
}

// admitMember reports whether the peer of c, another user than schedd's,
// is a member of the socket group g, logging the refusal when it is not.
func admitMember(c *net.UnixConn, g *SocketGroup, log *slog.Logger) bool {
	cr, err := peercred.Get(c)
	if err != nil {
		log.Warn("refused a connection: cannot read its peer credentials", "err", err)
		return false
	}
	if !cr.InGroup(g.GID) {
		log.Warn("refused a connection from a user neither schedd's nor in its socket group",
			"peer_uid", cr.UID, "peer_gid", cr.GID, "group", g.Name)
		return false
	}
	log.Debug("accepted a connection of a member of the socket group", "peer_uid", cr.UID, "peer_pid", cr.PID, "group", g.Name)
	return true
}
