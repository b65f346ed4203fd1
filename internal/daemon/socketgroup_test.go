package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ownGroup is the name of this process's effective group, which it may
// give its sockets; the test is skipped when the system has no name for it.
func ownGroup(t *testing.T) (string, int) {
	t.Helper()
	g, err := user.LookupGroupId(strconv.Itoa(os.Getegid()))
	if err != nil {
		t.Skipf("this process's group %d has no name: %v", os.Getegid(), err)
	}
	return g.Name, os.Getegid()
}

// TestSocketGroupFlag: --socket-group NAME (or its gid) shares the
// unix:PATH sockets, never the default one; a group the system does not
// know, or nothing to share, is refused at start, naming it.
func TestSocketGroupFlag(t *testing.T) {
	name, gid := ownGroup(t)
	env := envOf("XDG_RUNTIME_DIR", "/run/user/7", "XDG_DATA_HOME", "/data")
	g := &SocketGroup{Name: name, GID: gid}
	cases := []struct {
		name string
		args []string
		want []*SocketGroup // each listener's group; nil for an error
		err  string
	}{
		{"a name", []string{"--socket-group", name, "--listen", "unix:/run/sched/schedd.sock"}, []*SocketGroup{g}, ""},
		{"a gid", []string{"--socket-group", strconv.Itoa(gid), "--listen", "unix:/run/sched/schedd.sock"},
			[]*SocketGroup{{Name: strconv.Itoa(gid), GID: gid}}, ""},
		{"the default socket stays private", []string{"--socket-group", name, "--listen", "unix,unix:/run/sched/s.sock,tcp:127.0.0.1:7070"},
			[]*SocketGroup{nil, g, nil}, ""},
		{"off by default", []string{"--listen", "unix:/run/sched/schedd.sock"}, []*SocketGroup{nil}, ""},
		{"no such group", []string{"--socket-group", "no-such-group-4c1d", "--listen", "unix:/run/sched/schedd.sock"}, nil,
			`--socket-group "no-such-group-4c1d": no such group on this system`},
		{"no such gid", []string{"--socket-group", "4000000000", "--listen", "unix:/run/sched/schedd.sock"}, nil,
			`--socket-group "4000000000": no such group`},
		{"only the default socket", []string{"--socket-group", name}, nil, "no socket to share"},
		{"only TCP", []string{"--socket-group", name, "--listen", "tcp:127.0.0.1:7070"}, nil, "no socket to share"},
		{"empty", []string{"--socket-group", "", "--listen", "unix:/run/s.sock"}, nil, "--socket-group: give the name of a group"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.args, env, "test", io.Discard)
			if tc.err != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%v, want a usage error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []*SocketGroup
			for _, l := range cfg.Listen {
				got = append(got, l.Group)
			}
			if fmt.Sprint(deref(got)) != fmt.Sprint(deref(tc.want)) {
				t.Fatalf("groups %v, want %v", deref(got), deref(tc.want))
			}
			if (cfg.SocketGroup == nil) != (tc.name == "off by default") {
				t.Errorf("Config.SocketGroup %v", cfg.SocketGroup)
			}
		})
	}
}

func deref(gs []*SocketGroup) []SocketGroup {
	out := make([]SocketGroup, len(gs))
	for i, g := range gs {
		if g != nil {
			out[i] = *g
		} else {
			out[i] = SocketGroup{GID: -1}
		}
	}
	return out
}

// TestSharedSocketFile: with a group, the socket is 0660 and the group's,
// in a directory schedd makes 0750 for it (the group's too); a directory
// others may write in is refused at start, as schedctl would refuse a
// socket there.
func TestSharedSocketFile(t *testing.T) {
	name, gid := ownGroup(t)
	top, err := os.MkdirTemp("", "sg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	sock := filepath.Join(top, "run", "s.sock")
	g := &SocketGroup{Name: name, GID: gid}
	ln, err := listenUnix(Listen{Network: "unix", Address: sock, Group: g}, envOf(), log)
	if err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{sock: 0o660, filepath.Dir(sock): 0o750} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode || int(fi.Sys().(*syscall.Stat_t).Gid) != gid {
			t.Errorf("%s: mode %04o gid %d, want %04o gid %d", path, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Gid, mode, gid)
		}
	}
	if !strings.Contains(logs.String(), "the socket serves the members of a group too") {
		t.Errorf("log:\n%s", logs.String())
	}
	ln.Close()

	if err := os.Chmod(filepath.Dir(sock), 0o777); err != nil {
		t.Fatal(err)
	}
	_, err = listenUnix(Listen{Network: "unix", Address: sock, Group: g}, envOf(), log)
	if err == nil || !strings.Contains(err.Error(), "group or others may write in it") {
		t.Fatalf("a directory others may write in: %v", err)
	}
}

// TestAdmitMember: the membership check on a real connection's peer
// credentials (this process's own: its effective group and its
// supplementary groups count, another group does not).
func TestAdmitMember(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*net.UnixConn
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c.(*net.UnixConn))
	}
	groups, _ := os.Getgroups()
	other := 4242
	for slices.Contains(groups, other) || other == os.Getegid() {
		other++
	}
	cases := []struct {
		name string
		gid  int
		want bool
	}{
		{"its effective group", os.Getegid(), true},
		{"a group it is not in", other, false},
	}
	for _, g := range groups {
		cases = append(cases, struct {
			name string
			gid  int
			want bool
		}{"supplementary group " + strconv.Itoa(g), g, true})
	}
	for _, tc := range cases {
		var logs syncBuffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		got := admitMember(conns[0], &SocketGroup{Name: "g", GID: tc.gid}, log)
		if got != tc.want {
			t.Errorf("%s: admitted %v, want %v\n%s", tc.name, got, tc.want, logs.String())
		}
		if !tc.want && !strings.Contains(logs.String(), "refused a connection from a user neither schedd's nor in its socket group") {
			t.Errorf("%s: log:\n%s", tc.name, logs.String())
		}
	}
}

// TestSocketGroupServesMembers: over a real socket, a process of another
// user is served when the group is its primary or a supplementary one,
// and closed unread when it is not in it, even where the socket's mode
// would let it in. Needs root, to run those processes as nobody; skipped
// otherwise.
func TestSocketGroupServesMembers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	dir, err := os.MkdirTemp("", "sgm")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const gid = 4242 // no such group need exist: root may give any
	sock := filepath.Join(dir, "run", "s.sock")
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ln, err := listenUnix(Listen{Network: "unix", Address: sock, Group: &SocketGroup{Name: "members", GID: gid}}, envOf(), log)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served\n") })}
	served := make(chan struct{})
	go func() { srv.Serve(ln); close(served) }()
	defer func() { srv.Close(); <-served }()

	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "child")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o755); err != nil { // Run may have set the umask to 0077
		t.Fatal(err)
	}
	child := func(gid uint32, groups ...uint32) string {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Env = []string{"SCHEDD_PEERCRED_CHILD=" + sock}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: gid, Groups: groups}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child as nobody: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := child(65534, gid); !strings.HasPrefix(got, "answered: HTTP/1.1 200") {
		t.Errorf("a member by a supplementary group: %q", got)
	}
	if got := child(gid); !strings.HasPrefix(got, "answered: HTTP/1.1 200") {
		t.Errorf("a member by its primary group: %q", got)
	}
	// Not a member: the kernel refuses it at the socket's directory.
	if got := child(65534); !strings.Contains(got, "permission denied") {
		t.Errorf("not a member: %q", got)
	}
	// Where the modes would let it in, schedd still closes it unread.
	os.Chmod(filepath.Dir(sock), 0o755)
	os.Chmod(sock, 0o666)
	if got := child(65534); got != "closed" {
		t.Errorf("not a member, through modes open to all: %q", got)
	}
	if !strings.Contains(logs.String(), "refused a connection from a user neither schedd's nor in its socket group") ||
		!strings.Contains(logs.String(), "peer_uid=65534") {
		t.Errorf("log:\n%s", logs.String())
	}
}
