package daemon

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/store/sqlite"
)

// TestReconcileRefusesBesideADaemon: on SQLite the daemon holds the
// database's lock; schedd reconcile names the holder and says to ask the
// daemon, and exits 3 (it could not audit). Without the holder it runs (an empty store is
// clean: 0). Bad input is 2.
func TestReconcileRefusesBesideADaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sched.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	env := func(string) (string, bool) { return "", false }
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Reconcile(args, env, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, _, errOut := run("--store", "sqlite:"+path)
	if code != ExitTrouble || !strings.Contains(errOut, "another schedd is running on "+path) || !strings.Contains(errOut, "schedctl reconcile") {
		t.Errorf("beside a holder: exit %d, %q", code, errOut)
	}
	st.Close()
	if code, out, errOut := run("--store", "sqlite:"+path, "-o", "json"); code != ExitOK || !strings.Contains(out, `"problem": false`) {
		t.Errorf("alone: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"--store", "sqlite:" + path, "-o", "yaml"},
		{"--store", "sqlite:" + path, "--to", "tomorrow"},
		{"--store", "sqlite:" + filepath.Join(t.TempDir(), "none.db")},
		{"--store", "mysql://x"},
		{"--bogus"},
	} {
		if code, _, errOut := run(args...); code != ExitUsage || errOut == "" {
			t.Errorf("%v: exit %d, %q; want 2 and a message", args, code, errOut)
		}
	}
	if code, out, _ := run("--help"); code != ExitOK || !strings.Contains(out, "Exit status") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
