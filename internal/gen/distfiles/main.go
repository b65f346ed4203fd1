// Command distfiles writes the files that sched's release archives and
// packages ship beside the binaries: shell completion scripts of schedctl
// and schedd (bash, zsh, fish) and man pages of their commands. goreleaser
// runs it as a before hook (.goreleaser.yaml):
//
//	go run ./internal/gen/distfiles --out build --version 1.2.3 --date 2026-03-01T12:00:00Z
//
// It writes, under --out:
//
//	completions/schedctl.bash _schedctl schedctl.fish (and the same for schedd)
//	man/schedctl.1.gz schedctl-create.1.gz ... schedd.1.gz schedd-reconcile.1.gz schedd-simulate.1.gz
//	.gitignore, which keeps the whole directory out of git
//
// schedctl's pages come from its cobra command tree (internal/cli) through
// cobra/doc. schedd builds its cobra command inside daemon.ParseConfig and
// does not hand it out, so its pages carry its --help text as it prints it.
// The completion scripts only name the program: the shell asks the binary
// itself (PROGRAM __complete ARGS, cobra's protocol, which schedd's command
// answers too) for the words, so they stay true as flags change.
//
// The output depends only on the sources, --version and --date: man pages
// are compressed without a name or time, so that a release is reproducible.
package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/sched-dev/sched/internal/cli"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/daemon"
)

func main() {
	out := flag.String("out", "build", "the `directory` to write completions/ and man/ into")
	ver := flag.String("version", "dev", "the release the man pages name")
	date := flag.String("date", "", "the man pages' date, RFC 3339 (default: $SOURCE_DATE_EPOCH, else now)")
	flag.Parse()
	when, err := parseDate(*date, os.Getenv("SOURCE_DATE_EPOCH"))
	if err == nil {
		err = generate(*out, *ver, when)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "distfiles: %v\n", err)
		os.Exit(1)
	}
}

// parseDate is --date, else $SOURCE_DATE_EPOCH (seconds), else now.
func parseDate(date, epoch string) (time.Time, error) {
	switch {
	case date != "":
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return time.Time{}, fmt.Errorf("--date %q: want RFC 3339, e.g. 2026-03-01T12:00:00Z", date)
		}
		return t.UTC(), nil
	case epoch != "":
		var s int64
		if _, err := fmt.Sscan(epoch, &s); err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", epoch)
		}
		return time.Unix(s, 0).UTC(), nil
	}
	return time.Now().UTC(), nil
}

// generate writes the completions and man pages of both programs under out.
func generate(out, version string, date time.Time) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, ".gitignore"), []byte("# Written by go run ./internal/gen/distfiles (goreleaser's before hook).\n*\n")); err != nil {
		return err
	}
	schedctl := schedctlCommand(version)
	schedd, err := scheddCommand()
	if err != nil {
		return err
	}
	for _, root := range []*cobra.Command{schedctl, schedd} {
		if err := writeCompletions(filepath.Join(out, "completions"), root); err != nil {
			return err
		}
		if err := writeManPages(filepath.Join(out, "man"), root, version, date); err != nil {
			return err
		}
	}
	return nil
}

// schedctlCommand is schedctl's real command tree.
func schedctlCommand(version string) *cobra.Command {
	f := &cmdutil.Factory{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard,
		Now: time.Now, Version: version, LookupEnv: func(string) (string, bool) { return "", false }}
	return cli.NewCmdRoot(f)
}

// scheddCommand is a stand-in of schedd's command and its two offline
// subcommands for cobra/doc: their names and one-line summaries, and as
// the description each one's --help text, verbatim.
func scheddCommand() (*cobra.Command, error) {
	noEnv := func(string) (string, bool) { return "", false }
	var main, reconcile, simulate bytes.Buffer
	if _, err := daemon.ParseConfig([]string{"--help"}, noEnv, "", &main); !errors.Is(err, daemon.ErrHelp) {
		return nil, fmt.Errorf("schedd --help: %v", err)
	}
	if code := daemon.Reconcile([]string{"--help"}, noEnv, &reconcile, io.Discard); code != daemon.ExitOK {
		return nil, fmt.Errorf("schedd reconcile --help: exit status %d", code)
	}
	// Main sets the process's umask to 0077; writeFile sets each file's
	// mode itself.
	if code := daemon.Main("", []string{"simulate", "--help"}, &simulate, io.Discard); code != daemon.ExitOK {
		return nil, fmt.Errorf("schedd simulate --help: exit status %d", code)
	}
	run := func(*cobra.Command, []string) {}
	root := &cobra.Command{Use: "schedd", Short: "sched's daemon: schedules in, occurrences on a durable queue out",
		Long: verbatim(main.String()), Run: run}
	root.AddCommand(
		&cobra.Command{Use: "reconcile", Short: "Audit a store: expected firings against stored occurrences",
			Long: verbatim(reconcile.String()), Run: run},
		&cobra.Command{Use: "simulate -f FILE --from TIME --to TIME", Short: "Run a what-if simulation of a schedules file without a daemon",
			Long: verbatim(simulate.String()), Run: run},
	)
	// The flags are in the help text; the doc needs none of its own.
	root.CompletionOptions.DisableDefaultCmd = true
	return root, nil
}

// verbatim makes help text a Markdown code block, which go-md2man keeps
// as it is (no filling, no emphasis), indented in the man page. The help's
// "Usage:" block is left out: the page's SYNOPSIS says it.
func verbatim(help string) string {
	var blocks []string
	for _, b := range strings.Split(strings.TrimRight(help, "\n"), "\n\n") {
		if !strings.HasPrefix(b, "Usage:\n") {
			blocks = append(blocks, b)
		}
	}
	lines := strings.Split(strings.Join(blocks, "\n\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

// writeCompletions writes root's bash, zsh and fish completion scripts into
// dir, under the names each shell's completion directory expects.
func writeCompletions(dir string, root *cobra.Command) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := root.Name()
	for file, gen := range map[string]func(io.Writer) error{
		name + ".bash": func(w io.Writer) error { return root.GenBashCompletionV2(w, true) },
		"_" + name:     root.GenZshCompletion,
		name + ".fish": func(w io.Writer) error { return root.GenFishCompletion(w, true) },
	} {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := writeFile(filepath.Join(dir, file), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// writeManPages writes a gzipped man page, section 1, for root and every
// command under it that help lists, named as cobra/doc's GenManTree names
// them (schedctl-dlq-list.1.gz).
func writeManPages(dir string, root *cobra.Command, version string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		// The pages are the same for a given --date: no "Auto generated
		// ... on DATE" section.
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
				continue
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		header := &doc.GenManHeader{Section: "1", Date: &date, Source: "sched " + version, Manual: "sched manual"}
		var page bytes.Buffer
		if err := doc.GenMan(c, header, &page); err != nil {
			return fmt.Errorf("man page of %s: %w", c.CommandPath(), err)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // no name, no time: reproducible
		zw.Write(page.Bytes())
		if err := zw.Close(); err != nil {
			return err
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1.gz"
		return writeFile(filepath.Join(dir, name), gz.Bytes())
	}
	return walk(root)
}

// writeFile writes data to path with mode 0644 whatever the umask (which
// daemon.Main changes).
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o644); err != nil {
		return err
	}
	return os.Chmod(filepath.Dir(path), 0o755)
}
