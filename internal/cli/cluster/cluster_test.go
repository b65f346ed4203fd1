package cluster

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

var bg = context.Background()

// TestJSONFields pins the JSON field names of cluster, nested objects
// included: scripts depend on them.
func TestJSONFields(t *testing.T) {
	clitest.CheckJSONFields(t, clitest.Seeded, []clitest.JSONCase{
		{Name: "cluster", Run: func(f *cmdutil.Factory, s *clitest.Stub) error {
			return clusterRun(&ClusterOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true})
		}, Keys: []string{"node_id", "nodes", "now", "shards"}},
	})
	s := clitest.Seeded()
	var f *cmdutil.Factory
	var out *bytes.Buffer
	f, out, _ = clitest.NewFactory(false)
	if err := clusterRun(&ClusterOptions{IO: f, API: clitest.APIOf(s), Ctx: bg, JSON: true}); err != nil {
		t.Fatal(err)
	}
	cl := clitest.MustJSON(t, out.Bytes()).(map[string]any)
	for part, want := range map[string][]string{
		"nodes":  {"address", "clock_offset", "expires_at", "last_heartbeat", "live", "node_id", "shards_owned", "started_at"},
		"shards": {"epoch", "expires_at", "live", "owner", "shard"},
	} {
		var got []string
		for k := range cl[part].([]any)[0].(map[string]any) {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("cluster.%s fields\n got %v\nwant %v", part, got, want)
		}
	}
}

// TestClusterTable: two tables with headers on a terminal; tagged
// tab-separated rows otherwise.
func TestClusterTable(t *testing.T) {
	f, out, _ := clitest.NewFactory(true)
	if err := clusterRun(&ClusterOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	want := `NODE  ADDRESS             LAST HEARTBEAT        SHARDS  CLOCK OFFSET  LIVE
n1    unix:/run/a.sock    2027-03-13T12:00:00Z  1       -1.5ms        yes
n2    tcp:127.0.0.1:7070  2027-03-13T12:00:00Z  1       0s            yes

SHARD  OWNER  EPOCH  EXPIRES AT            LIVE
0      n1     3      2027-03-13T12:00:08Z  yes
1      n2     1      2027-03-13T12:00:08Z  yes
2      -      0      -                     no
`
	if out.String() != want {
		t.Errorf("tty:\n%s\nwant:\n%s", out, want)
	}
	f, out, _ = clitest.NewFactory(false)
	if err := clusterRun(&ClusterOptions{IO: f, API: clitest.APIOf(clitest.Seeded()), Ctx: bg}); err != nil {
		t.Fatal(err)
	}
	want = "KIND\tNODE\tADDRESS\tLAST HEARTBEAT\tSHARDS\tCLOCK OFFSET\tLIVE\n" +
		"node\tn1\tunix:/run/a.sock\t2027-03-13T12:00:00Z\t1\t-1.5ms\tyes\n" +
		"node\tn2\ttcp:127.0.0.1:7070\t2027-03-13T12:00:00Z\t1\t0s\tyes\n" +
		"KIND\tSHARD\tOWNER\tEPOCH\tEXPIRES AT\tLIVE\n" +
		"shard\t0\tn1\t3\t2027-03-13T12:00:08Z\tyes\n" +
		"shard\t1\tn2\t1\t2027-03-13T12:00:08Z\tyes\n" +
		"shard\t2\t-\t0\t-\tno\n"
	if out.String() != want {
		t.Errorf("not a tty:\n%q\nwant:\n%q", out, want)
	}
}
