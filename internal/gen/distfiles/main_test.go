package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// generate writes every completion script and a man page for every command
// help lists, each as the packages expect it, and the same bytes twice.
func TestGenerate(t *testing.T) {
	date := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := generate(dir, "1.2.3", date); err != nil {
			t.Fatal(err)
		}
	}

	for _, shells := range []map[string]string{
		{"schedctl.bash": "__start_schedctl", "_schedctl": "#compdef schedctl", "schedctl.fish": "complete -c schedctl"},
		{"schedd.bash": "__start_schedd", "_schedd": "#compdef schedd", "schedd.fish": "complete -c schedd"},
	} {
		for file, want := range shells {
			raw := read(t, filepath.Join(a, "completions", file))
			// The script asks the program itself for the words.
			if !strings.Contains(raw, want) || !strings.Contains(raw, "__complete") {
				t.Errorf("%s: lacks %q or cobra's __complete protocol", file, want)
			}
		}
	}

	schedctl := schedctlCommand("1.2.3")
	var pages []string
	for _, c := range schedctl.Commands() {
		if c.IsAvailableCommand() {
			pages = append(pages, "schedctl-"+c.Name()+".1.gz")
		}
	}
	pages = append(pages, "schedctl.1.gz", "schedctl-dlq-replay.1.gz", "schedctl-tenant-token-create.1.gz",
		"schedd.1.gz", "schedd-reconcile.1.gz", "schedd-simulate.1.gz")
	for _, page := range pages {
		text := gunzip(t, filepath.Join(a, "man", page))
		title := strings.ToUpper(strings.TrimSuffix(page, ".1.gz"))
		if !strings.Contains(text, `.TH "`+title+`" "1" "Mar 2026" "sched 1.2.3" "sched manual"`) {
			t.Errorf("%s: no title line for %s:\n%.300s", page, title, text)
		}
	}
	if text := gunzip(t, filepath.Join(a, "man", "schedd.1.gz")); !strings.Contains(text, "--shard-lease") || strings.Contains(text, "Auto generated") {
		t.Errorf("schedd.1 lacks schedd's flags or has a date-stamped footer:\n%s", text)
	}
	if text := gunzip(t, filepath.Join(a, "man", "schedctl-create.1.gz")); !strings.Contains(text, "idempotency") {
		t.Errorf("schedctl-create.1 lacks its flags:\n%s", text)
	}

	// Reproducible, and every file readable by all (the packages copy
	// modes), although daemon.Main set a private umask.
	err := filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if fi.Mode().Perm() != 0o755 && rel != "." {
				t.Errorf("%s: mode %v, want 0755", rel, fi.Mode().Perm())
			}
			return nil
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", rel, fi.Mode().Perm())
		}
		if read(t, path) != read(t, filepath.Join(b, rel)) {
			t.Errorf("%s differs between two runs", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(a, ".gitignore")); !strings.HasSuffix(got, "\n*\n") {
		t.Errorf(".gitignore %q does not ignore everything", got)
	}
}

func TestParseDate(t *testing.T) {
	want := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ date, epoch string }{
		{"2026-03-01T12:00:00Z", ""},
		{"2026-03-01T13:00:00+01:00", "1"},
		{"", "1772366400"},
	} {
		got, err := parseDate(c.date, c.epoch)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseDate(%q, %q) = %v, %v; want %v", c.date, c.epoch, got, err, want)
		}
	}
	for _, c := range []struct{ date, epoch string }{{"March", ""}, {"", "soon"}} {
		if _, err := parseDate(c.date, c.epoch); err == nil {
			t.Errorf("parseDate(%q, %q): no error", c.date, c.epoch)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader([]byte(read(t, path))))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(raw)
}
