package cluster_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/store"
)

// TestForgetCommand drives schedctl cluster forget through schedctl's
// root against a real daemon: a live node is refused with a message that
// names it and until when, an unknown one is not found, a tenant's token
// may not, and a dead node leaves cluster's output at once.
func TestForgetCommand(t *testing.T) {
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	d := clidaemon.New(t, clidaemon.Config{Start: start})
	ctx := t.Context()
	pass := func(e *engine.Engine) {
		t.Helper()
		if _, err := e.PlanOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pass(d.Engine)
	b, err := engine.New(ctx, engine.Config{Store: d.Store, Clock: d.Clock, Shards: 4, NodeID: "node-b", NodeAddress: "unix:/run/b.sock"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // node-b joins and gets its share
		d.Clock.Advance(time.Second)
		pass(d.Engine)
		pass(b)
	}
	// run returns stdout and stderr when the exit code is want.
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := d.Run(t, false, args...)
		if code != want {
			t.Fatalf("schedctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out, errOut
	}

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"cluster", "forget", "node-b"}, 1, `schedctl: cluster forget: conflict: cannot forget node "node-b": it is live (last heartbeat 2027-03-01T09:00:03Z, registered until 2027-03-01T09:00:13Z); stop it, or wait until its registration expires` + "\n"},
		{[]string{"cluster", "forget", "node-x"}, 1, `schedctl: cluster forget: not found: no such node "node-x"` + "\n"},
		{[]string{"cluster", "forget"}, 2, "schedctl: accepts 1 arg(s), received 0\n"},
		{[]string{"cluster", "forget", "node-b", "node-x"}, 2, "schedctl: accepts 1 arg(s), received 2\n"},
	} {
		if out, errOut := run(tc.code, tc.args...); out != "" || errOut != tc.stderr {
			t.Errorf("schedctl %s:\nstdout %q\nstderr %q\nwant stderr %q", strings.Join(tc.args, " "), out, errOut, tc.stderr)
		}
	}
	var acme api.TenantCreated
	out, _ := run(0, "tenant", "create", "acme", "-o", "json")
	if err := json.Unmarshal([]byte(out), &acme); err != nil {
		t.Fatal(err)
	}
	if _, errOut := run(1, "--token", acme.Token, "cluster", "forget", "node-b"); !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, "admin") {
		t.Errorf("cluster forget with a tenant's token: %q; want forbidden, naming the admin role", errOut)
	}

	// node-b dies (kill -9): once its registration has expired it may go,
	// though the live nodes would keep it for a while yet.
	d.Clock.Advance(engine.DefaultShardLease)
	pass(d.Engine)
	if out, errOut := run(0, "cluster", "forget", "node-b"); out != "forgot node node-b (last heartbeat 2027-03-01T09:00:03Z)\n" || errOut != "" {
		t.Errorf("cluster forget node-b: stdout %q stderr %q", out, errOut)
	}
	out, _ = run(0, "cluster")
	if nodes := strings.Count(out, "\nnode\t"); nodes != 1 || !strings.HasPrefix(out, "KIND\tNODE\t") || !strings.Contains(out, "\nnode\tnode-a\t") || strings.Contains(out, "node-b\t") {
		t.Errorf("cluster after forget:\n%s\nwant node-a alone, and node-b no longer among the nodes", out)
	}
	run(1, "cluster", "forget", "node-b")

	// -o json: the node as it was.
	if _, err := d.Store.HeartbeatNode(ctx, store.NodeHeartbeat{NodeID: "node-c", Address: "tcp:127.0.0.1:7072", TTL: time.Second, Now: start}); err != nil {
		t.Fatal(err)
	}
	out, _ = run(0, "cluster", "forget", "node-c", "-o", "json")
	var n api.ClusterNode
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		t.Fatalf("cluster forget -o json: %q: %v", out, err)
	}
	want := api.ClusterNode{NodeID: "node-c", Address: "tcp:127.0.0.1:7072", StartedAt: start, LastHeartbeat: start, ExpiresAt: start.Add(time.Second), ClockOffset: "0s"}
	if n != want {
		t.Errorf("cluster forget -o json:\n got %+v\nwant %+v", n, want)
	}
}
