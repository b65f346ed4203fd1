package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests build the real schedctl binary and drive it through its real
// flags, stdout, stderr and exit status: the contract scripts rely on.

var schedctl string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "schedctl-test")
	if err != nil {
		panic(err)
	}
	schedctl = filepath.Join(dir, "schedctl")
	// No test reads the contexts of whoever runs it: a config file that
	// does not exist, unless a test names another.
	os.Setenv("SCHED_CONFIG", filepath.Join(dir, "no-config.yaml"))
	os.Unsetenv("SCHED_CONTEXT")
	if out, err := exec.Command("go", "build", "-o", schedctl, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(schedctl, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run schedctl: %v", err)
	}
	return result{out.String(), errb.String(), code}
}

func TestPreviewInvalidInputExitsTwo(t *testing.T) {
	from := "--from=2027-01-01T00:00:00Z"
	cases := []struct {
		name string
		args []string
		want string // substring of the one stderr line
	}{
		{"minute out of range", []string{"--cron", "61 * * * *", "--tz", "UTC"}, `minute field "61": out of range 0-59`},
		{"hour out of range", []string{"--cron", "0 24 * * *", "--tz", "UTC"}, `hour field "24": out of range 0-23`},
		{"bad month name", []string{"--cron", "0 0 1 FOO *", "--tz", "UTC"}, `month field "FOO"`},
		{"step zero", []string{"--cron", "*/0 * * * *", "--tz", "UTC"}, `minute field "*/0": step must be at least 1`},
		{"too few fields", []string{"--cron", "* * *", "--tz", "UTC"}, "has 3 fields"},
		{"never fires", []string{"--cron", "0 0 31 2 *", "--tz", "UTC"}, "can never fire"},
		{"never fires 30 feb", []string{"--cron", "0 0 30 2 *", "--tz", "UTC"}, "can never fire"},
		{"never fires 31 short months", []string{"--cron", "0 0 31 4,6,9,11 *", "--tz", "UTC"}, "can never fire"},
		{"unknown zone", []string{"--cron", "0 0 * * *", "--tz", "Mars/Olympus"}, `time zone "Mars/Olympus": unknown IANA zone`},
		{"empty zone", []string{"--cron", "0 0 * * *", "--tz", ""}, "time zone is empty"},
		{"Local zone", []string{"--cron", "0 0 * * *", "--tz", "Local"}, `"Local": not allowed`},
		{"path zone", []string{"--cron", "0 0 * * *", "--tz", "../../etc/passwd"}, "unknown IANA zone"},
		{"no tz with cron", []string{"--cron", "0 0 * * *"}, "--tz is required with --cron"},
		{"no kind", []string{"--tz", "UTC"}, "exactly one of --cron, --at or --every"},
		{"two kinds", []string{"--cron", "0 0 * * *", "--every", "1h", "--tz", "UTC"}, "exactly one of"},
		{"bad flag", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--bogus"}, "unknown flag: --bogus"},
		{"bad count", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--count", "10001"}, "--count 10001: must be between 1 and 10000"},
		{"count zero", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--count", "0"}, "--count 0"},
		{"count not a number", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--count", "ten"}, `invalid argument "ten" for "--count"`},
		{"bad dst-gap", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--dst-gap", "later"}, `dst_gap "later": want skip or shift`},
		{"bad dst-repeat", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--dst-repeat", "both"}, `dst_repeat "both": want first, last or all`},
		{"dst flag with every", []string{"--every", "1h", "--dst-gap", "shift"}, "go with --cron only"},
		{"bad from", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--from", "yesterday"}, `from "yesterday": not an RFC 3339 time`},
		{"bad at", []string{"--at", "2027-13-01T00:00:00Z"}, `at "2027-13-01T00:00:00Z": not an RFC 3339 time`},
		{"every zero", []string{"--every", "0s"}, `every "0s": must be at least 1s`},
		{"every too fine", []string{"--every", "1500ms"}, "whole number of seconds"},
		{"every huge", []string{"--every", "9999999999h"}, `every "9999999999h"`},
		{"anchor without every", []string{"--cron", "0 0 * * *", "--tz", "UTC", "--anchor", "2027-01-01T00:00:00Z"}, "--anchor goes with --every only"},
		{"bad output", []string{"--cron", "0 0 * * *", "--tz", "UTC", "-o", "yaml"}, `invalid argument "yaml" for "-o, --output"`},
		{"expression too long", []string{"--cron", strings.Repeat("1,", 200) + "1 * * * *", "--tz", "UTC"}, "longer than the limit of 256"},
		{"two arguments", []string{"0 0 * * *", "extra", "--tz", "UTC"}, "preview takes at most one argument, a cron expression (quote it); got 2"},
		{"argument and --cron", []string{"0 0 * * *", "--cron", "0 0 * * *", "--tz", "UTC"}, "give the cron expression once: as the argument or with --cron"},
		{"argument is cron", []string{"extra", "--tz", "UTC"}, `cron expression "extra": has 1 field`},
		{"prefix zone unknown", []string{"CRON_TZ=Mars/Olympus 0 9 * * *"}, `cron expression's CRON_TZ= prefix: time zone "Mars/Olympus": unknown IANA zone`},
		{"prefix and --tz differ", []string{"--cron", "CRON_TZ=Asia/Tokyo 0 9 * * *", "--tz", "Europe/Berlin"}, `time zone "Europe/Berlin" differs from "Asia/Tokyo" in the cron expression's CRON_TZ= prefix`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, append([]string{"preview", from}, tc.args...)...)
			if r.code != 2 {
				t.Fatalf("exit status %d, want 2; stderr %q", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
				t.Errorf("stderr is not one line: %q", r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tc.want)
			}
		})
	}
}

func TestUnknownCommandExitsTwo(t *testing.T) {
	r := run(t, nil, "frobnicate")
	if r.code != 2 || !strings.Contains(r.stderr, "unknown command") {
		t.Fatalf("got %d %q", r.code, r.stderr)
	}
}

// previewJSON is the JSON contract of schedctl preview -o json.
type previewJSON struct {
	Kind       string `json:"kind"`
	Expression string `json:"expression"`
	TimeZone   string `json:"time_zone"`
	TZVersion  string `json:"tz_version"`
	Firings    []struct {
		ScheduledFor string `json:"scheduled_for"`
		Local        string `json:"local"`
		Note         string `json:"note"`
		Event        string `json:"event"`
	} `json:"firings"`
	DSTEvents []struct {
		Local string `json:"local"`
		Event string `json:"event"`
	} `json:"dst_events"`
}

// TestPreviewJSONMatchesDSTCases runs every case in testdata/dst through the
// binary. The cases' expected firings are proven against the brute-force
// reference in internal/timetable (TestDSTCases), so this shows the JSON the
// binary prints carries exactly those firings.
func TestPreviewJSONMatchesDSTCases(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/dst/*.txt")
	if len(files) == 0 {
		t.Fatal("no cases in testdata/dst")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			c := readCase(t, file)
			args := []string{"preview", "-o", "json", "--cron", c.head["cron"], "--tz", c.head["zone"],
				"--from", c.head["from"], "--count", c.head["count"]}
			if v, ok := c.head["dst-gap"]; ok {
				args = append(args, "--dst-gap", v)
			}
			if v, ok := c.head["dst-repeat"]; ok {
				args = append(args, "--dst-repeat", v)
			}
			r := run(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got previewJSON
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, r.stdout)
			}
			var lines []string
			skipped := map[string]bool{}
			for _, e := range got.DSTEvents {
				if e.Event == "gap_skipped" {
					skipped[e.Local] = true
				}
			}
			for _, f := range got.Firings {
				if !strings.HasSuffix(f.ScheduledFor, "Z") {
					t.Errorf("scheduled_for %q is not UTC with a Z", f.ScheduledFor)
				}
				lines = append(lines, f.ScheduledFor+" "+f.Local)
			}
			var want []string
			for _, l := range c.expect {
				if w, ok := strings.CutPrefix(l, "skipped "); ok {
					w = strings.Fields(w)[0] // the wall time; " zone_change" may follow
					if !skipped[w] {
						t.Errorf("dst_events lacks gap_skipped at %s", w)
					}
					delete(skipped, w)
					continue
				}
				f := strings.Fields(l)
				want = append(want, f[0]+" "+f[1])
			}
			for w := range skipped {
				t.Errorf("unexpected gap_skipped at %s", w)
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("firings differ\n got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

type dstCase struct {
	head   map[string]string
	expect []string
}

func readCase(t *testing.T, path string) dstCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := dstCase{head: map[string]string{}}
	inExpect := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "----":
			inExpect = true
		case inExpect:
			c.expect = append(c.expect, line)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s: bad header line %q", path, line)
			}
			c.head[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return c
}

func TestPreviewTableIsPlainWhenNotATerminal(t *testing.T) {
	r := run(t, nil, "preview", "--cron", "30 2 * * *", "--tz", "America/New_York",
		"--from", "2027-03-13T00:00:00Z", "--count", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("escape codes in non-TTY output:\n%q", r.stdout)
	}
	for _, want := range []string{
		"Sat 2027-03-13 02:30:00 EST -05:00  2027-03-13 07:30:00Z",
		"2027-03-14 02:30:00 (skipped)",
		"does not exist (DST gap)",
		"Mon 2027-03-15 02:30:00 EDT -04:00  2027-03-15 06:30:00Z",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestPreviewDefaultsAndKinds(t *testing.T) {
	cases := []struct {
		name      string
		args      []string
		wantFirst string
		wantN     int
	}{
		{"at fires once", []string{"--at", "2027-06-01T09:00:00+02:00", "--from", "2027-01-01T00:00:00Z"}, "2027-06-01T07:00:00Z", 1},
		{"every from epoch", []string{"--every", "90m", "--from", "2027-01-01T00:10:00Z", "--count", "3"}, "2027-01-01T01:30:00Z", 3},
		{"every with anchor", []string{"--every", "24h", "--anchor", "2027-03-13T12:00:00-05:00", "--tz", "America/New_York", "--from", "2027-03-13T00:00:00Z", "--count", "3"}, "2027-03-13T17:00:00Z", 3},
		{"six fields", []string{"--cron", "*/20 * * * * *", "--tz", "UTC", "--from", "2027-01-01T00:00:00Z", "--count", "4"}, "2027-01-01T00:00:20Z", 4},
		{"macro", []string{"--cron", "@daily", "--tz", "Asia/Tokyo", "--from", "2027-01-01T00:00:00Z"}, "2027-01-01T15:00:00Z", 10},
		{"rare leap day", []string{"--cron", "0 0 29 2 *", "--tz", "UTC", "--from", "2097-03-01T00:00:00Z", "--count", "1"}, "2104-02-29T00:00:00Z", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, append([]string{"preview", "-o", "json"}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got previewJSON
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Firings) != tc.wantN || got.Firings[0].ScheduledFor != tc.wantFirst {
				t.Fatalf("got %d firings starting %v, want %d starting %s", len(got.Firings), got.Firings, tc.wantN, tc.wantFirst)
			}
			if got.TZVersion == "" {
				t.Error("tz_version is empty")
			}
		})
	}
}

// TestPreviewZonePrefix: offline, a cron expression that names its zone as
// Kubernetes and robfig/cron write it previews in that zone, given as the
// argument or with --cron, with or without the same --tz; the JSON shows
// the expression without the prefix and the zone.
func TestPreviewZonePrefix(t *testing.T) {
	for _, args := range [][]string{
		{"CRON_TZ=Asia/Tokyo 0 9 * * *"},
		{"--cron", "TZ=Asia/Tokyo 0 9 * * *"},
		{"--cron", "CRON_TZ=Asia/Tokyo 0 9 * * *", "--tz", "Asia/Tokyo"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, nil, append([]string{"preview", "-o", "json", "--from", "2027-01-01T12:00:00Z", "--count", "2"}, args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got previewJSON
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Expression != "0 9 * * *" || got.TimeZone != "Asia/Tokyo" || len(got.Firings) != 2 ||
				got.Firings[0].ScheduledFor != "2027-01-02T00:00:00Z" || got.Firings[0].Local != "2027-01-02T09:00:00+09:00" {
				t.Fatalf("preview %+v", got)
			}
		})
	}
}

func TestPreviewStopsAtYear9999(t *testing.T) {
	r := run(t, nil, "preview", "-o", "json", "--cron", "59 23 31 12 *", "--tz", "America/New_York",
		"--from", "9990-01-01T00:00:00Z", "--count", "10000")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Firings []struct {
			ScheduledFor string `json:"scheduled_for"`
		} `json:"firings"`
		End string `json:"end"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.End == "" || len(got.Firings) == 0 || len(got.Firings) > 10 {
		t.Fatalf("want a few firings and an end note, got %d firings, end %q", len(got.Firings), got.End)
	}
	if last := got.Firings[len(got.Firings)-1].ScheduledFor; last > "9999-12-31T23:59:59Z" {
		t.Fatalf("firing past year 9999: %s", last)
	}
}

func TestVersion(t *testing.T) {
	r := run(t, nil, "version", "-o", "json")
	var v struct {
		Version   string `json:"version"`
		TZVersion string `json:"tz_version"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil || v.TZVersion == "" {
		t.Fatalf("version: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
