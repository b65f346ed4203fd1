package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/jsonkeys"
)

// burstSchedules is the size of the tests' bursts and scale load.
const burstSchedules = 20000

// The binaries under test, built once by TestMain; schedd sits next to
// schedctl, where bench looks for it by default.
var schedctlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sched-bench-bin")
	if err != nil {
		panic(err)
	}
	schedctlBin = filepath.Join(dir, "schedctl")
	for bin, pkg := range map[string]string{
		filepath.Join(dir, "schedd"): "github.com/sched-dev/sched/cmd/schedd",
		schedctlBin:                  "github.com/sched-dev/sched/cmd/schedctl",
	} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			os.RemoveAll(dir)
			panic(fmt.Sprintf("go build %s: %v", pkg, err))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requiredKeys are the JSON fields bench promises scripts.
var requiredKeys = []string{
	"mode", "store", "schedules", "delivered", "missing", "duplicates", "concurrent_duplicates",
	"delivery_lag_ms.p50", "delivery_lag_ms.p95", "delivery_lag_ms.p99", "delivery_lag_ms.max",
	"schedule_lag_ms.p50", "schedule_lag_ms.p95", "schedule_lag_ms.p99", "schedule_lag_ms.max",
	"deliveries_per_s", "schedd_peak_rss_mb", "store_bytes", "load_s",
	"timeline", "timeline[].second", "timeline[].delivered",
}

// TestBench runs each mode of the real schedctl bench against the real
// schedd it starts, and checks that every firing arrived once and the
// JSON holds every promised field; never the timing, which depends on
// the machine.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("minutes of real firings")
	}
	cases := []struct {
		name  string
		args  []string
		extra []string // further keys this mode adds
		pg    bool
	}{
		{name: "burst", args: []string{"burst", "--schedules", fmt.Sprint(burstSchedules), "--create-lead", "45s"}},
		{name: "burst flexible pool", args: []string{"burst", "--schedules", "500", "--tenants", "3", "--flex-window", "10s", "--create-lead", "20s"},
			extra: []string{"flex.tenths", "flex.max_min_ratio", "flex.outside_window"}},
		{name: "sustained", args: []string{"sustained", "--rate", "200", "--duration", "10s", "--create-lead", "20s"},
			extra: []string{"rate", "target_p99_ms"}},
		{name: "scale", args: []string{"scale", "--schedules", fmt.Sprint(burstSchedules), "--burst", "2000", "--create-lead", "45s"},
			extra: []string{"scale.load_rss_max_mb", "scale.after_load_store_bytes", "creates_per_s"}},
		{name: "burst postgres", args: []string{"burst", "--schedules", fmt.Sprint(burstSchedules), "--create-lead", "45s"}, pg: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.pg {
				dsn := os.Getenv("SCHED_TEST_POSTGRES_DSN")
				if dsn == "" {
					t.Skip("SCHED_TEST_POSTGRES_DSN not set")
				}
				args = append(args, "--store", dsn)
			}
			t.Parallel()
			res, raw := runBench(t, args...)
			checkKeys(t, raw, append(slices.Clone(requiredKeys), tc.extra...))
			if res.Missing != 0 || res.ConcurrentDuplicates != 0 || res.UnknownSchedule != 0 {
				t.Errorf("missing %d, concurrent duplicates %d, unknown %d; errors %v", res.Missing, res.ConcurrentDuplicates, res.UnknownSchedule, res.Errors)
			}
			if res.Expected == 0 || res.Delivered != res.Expected {
				t.Errorf("delivered %d of %d expected", res.Delivered, res.Expected)
			}
			if want := map[bool]string{false: "sqlite", true: "postgres"}[tc.pg]; res.Store != want {
				t.Errorf("store %q, want %q", res.Store, want)
			}
		})
	}
}

// result is the part of bench's JSON the test checks by value.
type result struct {
	Store                string   `json:"store"`
	Expected             int      `json:"expected"`
	Delivered            int      `json:"delivered"`
	Missing              int      `json:"missing"`
	ConcurrentDuplicates int      `json:"concurrent_duplicates"`
	UnknownSchedule      int      `json:"unknown_schedule"`
	Errors               []string `json:"errors"`
}

// runBench runs schedctl bench ARGS -o json, requires exit status 0 and
// returns its answer, decoded and raw.
func runBench(t *testing.T, args ...string) (result, []byte) {
	t.Helper()
	cmd := exec.Command(schedctlBin, append([]string{"bench"}, append(args, "-o", "json")...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run schedctl bench: %v", err)
	}
	if err != nil {
		t.Errorf("schedctl bench %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, errb.String(), out.String())
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not JSON: %v\nstderr: %s\nstdout: %s", err, errb.String(), out.String())
	}
	return res, out.Bytes()
}

// checkKeys requires every key in raw.
func checkKeys(t *testing.T, raw []byte, keys []string) {
	t.Helper()
	paths, err := jsonkeys.Paths(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !slices.Contains(paths, k) {
			t.Errorf("JSON lacks %q: %s", k, raw)
		}
	}
}

// TestScheddNotFound: without schedd beside schedctl nor in PATH, bench
// says where it looked, exits 1, and starts nothing.
func TestScheddNotFound(t *testing.T) {
	dir := t.TempDir()
	lone := filepath.Join(dir, "schedctl")
	b, err := os.ReadFile(schedctlBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lone, "bench", "burst", "--schedules", "1")
	cmd.Env = append(os.Environ(), "PATH="+dir+"/nothing")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1: %s", err, out)
	}
	if s := string(out); !strings.Contains(s, filepath.Join(dir, "schedd")) || !strings.Contains(s, "PATH") {
		t.Errorf("error does not name both places: %s", s)
	}
}
