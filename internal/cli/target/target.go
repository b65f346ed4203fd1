// Package target is schedctl target (create, list, get, update, delete,
// test): a tenant's targets, the named places outside sched that a
// schedule's firings are delivered into instead of the built-in queue (a
// NATS JetStream subject, or an HTTP webhook signed by the Standard
// Webhooks scheme). A schedule names one with schedctl create --target.
//
// A target belongs to the tenant of the caller's token: a tenant sees and
// names its own targets only. A webhook's signing secret is printed once,
// when it is made (or rotated, or given); no command can show it again.
package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
)

// API is what these commands need of schedd: the target methods of
// *client.Client, kept apart from cmdutil.API as tenant's are.
type API interface {
	CreateTarget(ctx context.Context, req api.TargetRequest) (*api.TargetSaved, error)
	ListTargets(ctx context.Context) (*api.TargetList, error)
	GetTarget(ctx context.Context, name string) (*api.Target, error)
	UpdateTarget(ctx context.Context, name string, req api.TargetRequest) (*api.TargetSaved, error)
	DeleteTarget(ctx context.Context, name string) (*api.Target, error)
	TestTarget(ctx context.Context, name string) (*api.TargetTest, error)
}

var _ API = (*client.Client)(nil)

// apiOf is the constructor of a command's API: the client the global
// --addr and --token make.
func apiOf(f *cmdutil.Factory) func() (API, error) {
	return func() (API, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// Options is what every target command holds: its streams, the API, the
// context and -o json.
type Options struct {
	IO   *cmdutil.Factory
	API  func() (API, error)
	Ctx  context.Context
	JSON bool
}

// SecretNotice goes to standard error whenever a secret is printed: it
// cannot be shown again.
const SecretNotice = "Store this secret now: it is shown only once; receivers verify the webhook-signature with it."

// NewCmdTarget builds schedctl target, the group of the target commands.
func NewCmdTarget(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCmd("target", "Targets: NATS subjects and webhooks a schedule's firings are delivered into",
		`  schedctl target create orders --nats orders.fire --nats-url nats://nats.internal:4222
  schedctl target create billing --webhook https://billing.example.com/hooks/sched
  schedctl target test billing
  schedctl create --name nightly --target billing --cron '0 2 * * *' --tz Europe/Berlin`)
	cmd.Long = `A target is one of your tenant's named places outside sched: a schedule
that names it (schedctl create --target NAME) has its firings delivered
there instead of waiting in a queue for a worker. There are two kinds:

  nats     a NATS JetStream subject (--nats SUBJECT), on the server at
           --nats-url, with the credentials file --nats-creds, a path on
           schedd's host
  webhook  an HTTP endpoint (--webhook URL) sent a POST per firing, signed
           by the Standard Webhooks scheme (webhook-id, webhook-timestamp
           and webhook-signature headers) with the target's secret

A webhook's secret ("whsec_...") is printed once, when it is made: store
it then, for the receiver to verify signatures with. get, list and -o json
say only whether a target has one (secret_set). Header values given with
--header are never shown either.

Targets belong to the tenant of your token: another tenant neither sees
nor names them. A target that ACTIVE or PAUSED schedules name, or that
still owes firings (waiting, retrying or being delivered), cannot be
deleted.`
	cmd.AddCommand(
		NewCmdCreate(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdUpdate(f, nil),
		NewCmdDelete(f, nil), NewCmdTest(f, nil),
	)
	return cmd
}

// wrapErr names the command in an error.
func wrapErr(what string, err error) error {
	return fmt.Errorf("%s: %w", what, err)
}

// The settings of each kind, as schedd takes them (config): the flags
// make them, and get shows them.
type (
	natsSettings struct {
		Subject   string `json:"subject"`
		URL       string `json:"url,omitempty"`
		CredsFile string `json:"creds_file,omitempty"`
	}
	webhookSettings struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
		Timeout string            `json:"timeout,omitempty"`
	}
)

// kindFlags are the settings flags of create and update: one kind's
// destination and its options, and the webhook's secret.
type kindFlags struct {
	nats, natsURL, natsCreds string
	webhook, secretFile      string
	headers                  []string
	timeout                  time.Duration
	rotate                   bool // update only
}

var (
	natsOnly    = []string{"nats-url", "nats-creds"}
	webhookOnly = []string{"header", "timeout", "secret-file", "rotate-secret"}
)

func (k *kindFlags) register(fl *pflag.FlagSet, update bool) {
	fl.StringVar(&k.nats, "nats", "", "a nats target: the JetStream subject its firings are published on")
	fl.StringVar(&k.natsURL, "nats-url", "", "with --nats: the NATS server's URL (not given: schedd's default, nats://127.0.0.1:4222)")
	fl.StringVar(&k.natsCreds, "nats-creds", "", "with --nats: a NATS credentials file, a path on schedd's host")
	fl.StringVar(&k.webhook, "webhook", "", "a webhook target: the http or https URL its firings are POSTed to")
	fl.StringArrayVar(&k.headers, "header", nil, "with --webhook: a header sent with every request, NAME=VALUE (repeatable); its value is never shown")
	fl.DurationVar(&k.timeout, "timeout", 0, "with --webhook: how long one request may take, e.g. 10s (not given: schedd's default, 10s)")
	secret := "with --webhook: a file holding the signing secret to use, whsec_... (- for standard input; not given: schedd makes one)"
	if update {
		secret = "with --webhook: a file holding a new signing secret, whsec_... (- for standard input; not given: the secret stays)"
		fl.BoolVar(&k.rotate, "rotate-secret", false, "with --webhook: have schedd make a new signing secret, printed once")
	}
	fl.StringVar(&k.secretFile, "secret-file", "", secret)
}

// changed lists the flags of names that were given, as --flag.
func changed(fl *pflag.FlagSet, names []string) []string {
	var out []string
	for _, n := range names {
		if fl.Lookup(n) != nil && fl.Changed(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

// request is the request the given flags make: the kind, its settings as
// a JSON object, and the secret read from --secret-file or asked for by
// --rotate-secret. in is standard input, for --secret-file -. Every
// fault is a usage error naming the flag, and nothing is sent.
func (k *kindFlags) request(fl *pflag.FlagSet, in io.Reader) (api.TargetRequest, error) {
	var r api.TargetRequest
	isNATS, isWebhook := fl.Changed("nats"), fl.Changed("webhook")
	switch {
	case isNATS && isWebhook:
		return r, cmdutil.UsageErrorf("give --nats or --webhook, not both: a target is one kind")
	case !isNATS && !isWebhook:
		return r, cmdutil.UsageErrorf("give --nats SUBJECT or --webhook URL: the kind of target and where it delivers")
	}
	var err error
	if isNATS {
		if bad := changed(fl, webhookOnly); len(bad) > 0 {
			return r, cmdutil.UsageErrorf("%s: only for a --webhook target, not --nats", strings.Join(bad, ", "))
		}
		if strings.TrimSpace(k.nats) == "" {
			return r, cmdutil.UsageErrorf("--nats: the subject is empty")
		}
		r.Kind = string(record.TargetNATS)
		r.Config, err = json.Marshal(natsSettings{Subject: k.nats, URL: k.natsURL, CredsFile: k.natsCreds})
		return r, err
	}
	if bad := changed(fl, natsOnly); len(bad) > 0 {
		return r, cmdutil.UsageErrorf("%s: only for a --nats target, not --webhook", strings.Join(bad, ", "))
	}
	if strings.TrimSpace(k.webhook) == "" {
		return r, cmdutil.UsageErrorf("--webhook: the URL is empty")
	}
	s := webhookSettings{URL: k.webhook}
	if s.Headers, err = parseHeaders(k.headers); err != nil {
		return r, err
	}
	if fl.Changed("timeout") {
		if k.timeout <= 0 {
			return r, cmdutil.UsageErrorf("--timeout %s: want a positive duration, e.g. 10s", k.timeout)
		}
		s.Timeout = k.timeout.String()
	}
	if fl.Changed("secret-file") {
		if k.rotate {
			return r, cmdutil.UsageErrorf("give --secret-file or --rotate-secret, not both: a secret of your own, or a new one made by schedd")
		}
		if r.Secret, err = readSecret(k.secretFile, in); err != nil {
			return r, err
		}
	}
	r.Kind, r.RotateSecret = string(record.TargetWebhook), k.rotate
	r.Config, err = json.Marshal(s)
	return r, err
}

// secretPrefix starts a Standard Webhooks secret.
const secretPrefix = "whsec_"

// readSecret reads a secret from path (- for in), trimmed of the space
// around it. Its errors never quote the file's content.
func readSecret(path string, in io.Reader) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(in, 64<<10))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", &cmdutil.UsageError{Err: fmt.Errorf("--secret-file: %w", err)}
	}
	s := strings.TrimSpace(string(b))
	switch {
	case s == "":
		return "", cmdutil.UsageErrorf("--secret-file %s: empty; want a secret, whsec_ followed by base64", path)
	case !strings.HasPrefix(s, secretPrefix):
		return "", cmdutil.UsageErrorf("--secret-file %s: not a Standard Webhooks secret: want whsec_ followed by base64", path)
	case strings.ContainsAny(s, " \t\r\n"):
		return "", cmdutil.UsageErrorf("--secret-file %s: holds more than one word; want the secret alone, whsec_ followed by base64", path)
	}
	return s, nil
}

// parseHeaders reads --header NAME=VALUE flags into the webhook's
// headers; nil for none. A fault names the header by its name, never its
// value (often a credential).
func parseHeaders(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(flags))
	seen := map[string]string{}
	for _, h := range flags {
		name, value, ok := strings.Cut(h, "=")
		if !ok {
			return nil, cmdutil.UsageErrorf("--header %s: want NAME=VALUE, e.g. --header 'Authorization=Bearer ...'", headerLabel(h))
		}
		if name == "" {
			return nil, cmdutil.UsageErrorf("--header =...: the header's name is empty; want NAME=VALUE")
		}
		if !isToken(name) {
			return nil, cmdutil.UsageErrorf("--header %s: %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~)", headerLabel(h), name)
		}
		if strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return nil, cmdutil.UsageErrorf("--header %s=...: its value holds a control character (a newline?)", name)
		}
		key := strings.ToLower(name)
		if first, dup := seen[key]; dup {
			return nil, cmdutil.UsageErrorf("--header %s=...: given twice (also as %s)", name, first)
		}
		seen[key] = name
		out[name] = value
	}
	return out, nil
}

// headerLabel is how a bad --header is named in an error: its text up to
// the first "=", ":" or space, with "..." for what it hides, so that a
// value (a token typed as "Authorization: Bearer x") is never echoed.
func headerLabel(h string) string {
	i := strings.IndexAny(h, "=: \t")
	if i < 0 {
		return strconv.Quote(h)
	}
	return strconv.Quote(h[:i] + "...")
}

// isToken says whether s is an HTTP field name (RFC 9110's token).
func isToken(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return s != ""
}

// printSecret prints a new secret alone on a line, plainly marked, so a
// person sees it and a script can take it from the first line.
func printSecret(f *cmdutil.Factory, secret string) error {
	_, err := fmt.Fprintf(f.Out, "secret: %s\n", cmdutil.Cell(secret))
	return err
}

// printSaved prints the answer of a create or an update: the secret once
// when the change made or took one (its notice on standard error), then
// the target as list prints it; -o json the whole answer.
func printSaved(opts *Options, res *api.TargetSaved) error {
	f := opts.IO
	if res.Secret != "" {
		fmt.Fprintln(f.ErrOut, SecretNotice)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, res)
	}
	if res.Secret != "" {
		if err := printSecret(f, res.Secret); err != nil {
			return err
		}
	}
	return printTargets(f, []api.Target{res.Target})
}

// settings reads a target's config as a JSON object; nil when it is not
// one.
func settings(t *api.Target) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t.Config, &m); err != nil {
		return nil
	}
	return m
}

// text is a setting as a cell: a JSON string unquoted, anything else as
// compact JSON; "" for none.
func text(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return cmdutil.CompactJSON(raw)
}

// destination is where a target delivers: a nats target's subject, a
// webhook's URL.
func destination(t *api.Target) string {
	m := settings(t)
	switch record.TargetKind(t.Kind) {
	case record.TargetNATS:
		return text(m["subject"])
	case record.TargetWebhook:
		return text(m["url"])
	}
	return ""
}

func secretWord(set bool) string {
	if set {
		return "set"
	}
	return "none"
}

// printTargets prints targets as a table: NAME, KIND, DESTINATION,
// SECRET, VERSION, UPDATED.
func printTargets(f *cmdutil.Factory, ts []api.Target) error {
	t := cmdutil.NewTable(f, "NAME", "KIND", "DESTINATION", "SECRET", "VERSION", "UPDATED")
	for i := range ts {
		tg := &ts[i]
		t.Row(tg.Name, tg.Kind, destination(tg), secretWord(tg.SecretSet), strconv.FormatInt(tg.Version, 10), cmdutil.TSV(tg.UpdatedAt))
	}
	return t.Print()
}

// kindSettings are each kind's settings in the order get shows them, and
// what a setting not given means.
var kindSettings = map[record.TargetKind][]struct{ key, unset string }{
	record.TargetNATS:    {{"subject", ""}, {"url", "default"}, {"creds_file", "none"}},
	record.TargetWebhook: {{"url", ""}, {"headers", "none"}, {"timeout", "default"}},
}

// printTarget prints one target as field/value rows: who and what it is,
// each of its kind's settings (a webhook's header values as schedd shows
// them, redacted), whether it has a secret, and its version and dates.
func printTarget(f *cmdutil.Factory, tg *api.Target) error {
	t := cmdutil.NewTable(f)
	t.Row("name", tg.Name)
	t.Row("tenant", tg.Tenant)
	t.Row("kind", tg.Kind)
	m := settings(tg)
	known, ok := kindSettings[record.TargetKind(tg.Kind)]
	if m == nil || !ok {
		t.Row("config", cmdutil.CompactJSON(tg.Config))
	} else {
		for _, s := range known {
			raw, given := m[s.key]
			delete(m, s.key)
			if s.key == "headers" && given {
				if rows := headerRows(raw); rows != nil {
					for _, r := range rows {
						t.Row("header", r)
					}
					continue
				}
			}
			v := text(raw)
			if v == "" {
				v = s.unset
			}
			t.Row(s.key, v)
		}
		// Settings this schedctl does not know (a newer schedd's), as given.
		rest := make([]string, 0, len(m))
		for k := range m {
			rest = append(rest, k)
		}
		sort.Strings(rest)
		for _, k := range rest {
			t.Row(k, text(m[k]))
		}
	}
	t.Row("secret", secretWord(tg.SecretSet))
	t.Row("version", strconv.FormatInt(tg.Version, 10))
	t.Row("created_at", cmdutil.TSV(tg.CreatedAt))
	t.Row("updated_at", cmdutil.TSV(tg.UpdatedAt))
	return t.Print()
}

// headerRows are a webhook's headers as "Name: value" by name; nil when
// raw is not an object of strings or is empty.
func headerRows(raw json.RawMessage) []string {
	var h map[string]string
	if err := json.Unmarshal(raw, &h); err != nil || len(h) == 0 {
		return nil
	}
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + ": " + h[n]
	}
	return out
}

const settingsHelp = `
Exactly one of --nats and --webhook says the kind; the other flags are
that kind's options:

  --nats SUBJECT      --nats-url URL, --nats-creds FILE (a path on
                      schedd's host)
  --webhook URL       --header NAME=VALUE (repeatable), --timeout D,
                      --secret-file F (a whsec_ secret of your own; - reads
                      standard input)

A webhook's URL is checked by schedd: it must not reach a private or
loopback address unless schedd allows it (schedd --webhook-allow).`

// CreateOptions is schedctl target create.
type CreateOptions struct {
	Options
	Request api.TargetRequest
}

// NewCmdCreate builds schedctl target create.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{Options: Options{IO: f, API: apiOf(f)}}
	var kf kindFlags
	cmd := &cobra.Command{
		Use:   "create NAME (--nats SUBJECT [--nats-url URL] [--nats-creds FILE] | --webhook URL [--secret-file F] [--header NAME=VALUE]... [--timeout D])",
		Short: "Create a target: a NATS subject or a webhook",
		Long: `Create makes a target of your tenant named NAME and prints it.
` + settingsHelp + `

A webhook target has a signing secret: schedd makes one unless
--secret-file gives it. Whenever the answer carries a secret it is printed
once, on the first line of standard output as "secret: whsec_...", before
the target; a notice on standard error says to store it. schedd never
shows it again. With -o json the whole answer is one object: target and
secret.`,
		Example: `  schedctl target create orders --nats orders.fire
  schedctl target create orders --nats orders.fire --nats-url nats://nats.internal:4222 --nats-creds /etc/sched/nats.creds
  schedctl target create billing --webhook https://billing.example.com/hooks/sched --header 'Authorization=Bearer abc123' --timeout 5s
  schedctl target create billing --webhook https://billing.example.com/hooks/sched -o json | jq -r .secret > billing.secret`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNewName(args[0]); err != nil {
				return err
			}
			r, err := kf.request(cmd.Flags(), f.In)
			if err != nil {
				return err
			}
			r.Name = args[0]
			opts.Request, opts.Ctx, opts.JSON = r, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return createRun(opts)
		},
	}
	kf.register(cmd.Flags(), false)
	return cmd
}

// checkNewName checks the name of a target about to be created, offline,
// by schedd's own rule: one schedd would refuse is a usage error, and
// nothing is sent.
func checkNewName(name string) error {
	err := schedule.CheckTargetName(name)
	if ve := (*schedule.ValidationError)(nil); errors.As(err, &ve) {
		return cmdutil.UsageErrorf("target name: %s", ve.Reason())
	}
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	return nil
}

func createRun(opts *CreateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.CreateTarget(opts.Ctx, opts.Request)
	if err != nil {
		return wrapErr("target create "+opts.Request.Name, err)
	}
	return printSaved(&opts.Options, res)
}

// ListOptions is schedctl target list.
type ListOptions struct{ Options }

// NewCmdList builds schedctl target list.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your tenant's targets",
		Long: `List prints every target of your tenant, by name: NAME, KIND (nats or
webhook), DESTINATION (a nats target's subject, a webhook's URL), SECRET
(set or none: the secret itself is never shown), VERSION and UPDATED.
JSON output is an array of targets, [] when there are none.`,
		Example: `  schedctl target list
  schedctl target list -o json | jq -r '.[] | select(.kind == "webhook") | .name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx, opts.JSON = cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	return cmd
}

func listRun(opts *ListOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	l, err := c.ListTargets(opts.Ctx)
	if err != nil {
		return wrapErr("target list", err)
	}
	ts := l.Targets
	if ts == nil {
		ts = []api.Target{}
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, ts)
	}
	return printTargets(opts.IO, ts)
}

// GetOptions is schedctl target get.
type GetOptions struct {
	Options
	Name string
}

// NewCmdGet builds schedctl target get.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{Options: Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a target and its settings",
		Long: `Get prints one target as field/value rows: name, tenant, kind, the kind's
settings (a nats target's subject, url and creds_file; a webhook's url,
one header row per header, and timeout; "default" where schedd's default
applies), secret (set or none), version and dates. A header's value is
shown as "(redacted)" and the secret never: schedd does not show them.
JSON output is the target, its settings in config.`,
		Example: `  schedctl target get billing
  schedctl target get orders -o json | jq -r .config.subject`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return getRun(opts)
		},
	}
	return cmd
}

func getRun(opts *GetOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	tg, err := c.GetTarget(opts.Ctx, opts.Name)
	if err != nil {
		return wrapErr("target get "+opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, tg)
	}
	return printTarget(opts.IO, tg)
}

// UpdateOptions is schedctl target update.
type UpdateOptions struct {
	Options
	Name    string
	Request api.TargetRequest
}

// NewCmdUpdate builds schedctl target update.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{Options: Options{IO: f, API: apiOf(f)}}
	var kf kindFlags
	cmd := &cobra.Command{
		Use:   "update NAME (--nats SUBJECT ... | --webhook URL ...) [--rotate-secret | --secret-file F]",
		Short: "Replace a target's settings, or rotate its secret",
		Long: `Update replaces every setting of the target NAME with what its flags say:
it is a replacement, not a patch. A setting not given goes back to its
default (or to none: a header not repeated is dropped), so give the kind
and all its options each time, as create does. The kind may change.
` + settingsHelp + `

A webhook keeps its signing secret unless --rotate-secret asks schedd for
a new one or --secret-file gives one (a target that changes kind to
webhook gets a new one). A new secret is printed once, on the first line
of standard output as "secret: whsec_...", with a notice on standard
error; receivers must be given it. The schedules that name the target
deliver with the new settings from their next batch on. It prints the
target as list does; -o json prints the whole answer: target and secret.`,
		Example: `  schedctl target update orders --nats orders.fire.v2 --nats-url nats://nats.internal:4222
  schedctl target update billing --webhook https://billing.example.com/hooks/sched --rotate-secret
  schedctl target update billing --webhook https://billing.example.com/v2/hooks --header 'Authorization=Bearer new' --secret-file billing.secret`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := kf.request(cmd.Flags(), f.In)
			if err != nil {
				return err
			}
			opts.Name, opts.Request, opts.Ctx, opts.JSON = args[0], r, cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return updateRun(opts)
		},
	}
	kf.register(cmd.Flags(), true)
	return cmd
}

func updateRun(opts *UpdateOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	res, err := c.UpdateTarget(opts.Ctx, opts.Name, opts.Request)
	if err != nil {
		return wrapErr("target update "+opts.Name, err)
	}
	return printSaved(&opts.Options, res)
}

// DeleteOptions is schedctl target delete.
type DeleteOptions struct {
	Options
	Name string
}

// NewCmdDelete builds schedctl target delete.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{Options: Options{IO: f, API: apiOf(f)}}
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a target no live schedule names",
		Long: `Delete removes the target NAME. schedd refuses (conflict, exit status 1)
while ACTIVE or PAUSED schedules name it, and while it still owes
firings (waiting, retrying or being delivered: they are delivered or go
to the dead-letter queue first), so that deleting never silently stops
work: cancel the schedules, or update them to another target, first. Its
name is free again at once. It prints one line; JSON output is the target
as it was.`,
		Example: `  schedctl target delete billing
  schedctl target delete billing -o json | jq .version`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Ctx, opts.JSON = args[0], cmd.Context(), f.JSONOut()
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(opts)
		},
	}
	return cmd
}

func deleteRun(opts *DeleteOptions) error {
	c, err := opts.API()
	if err != nil {
		return err
	}
	tg, err := c.DeleteTarget(opts.Ctx, opts.Name)
	if err != nil {
		return wrapErr("target delete "+opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, tg)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "deleted target %s\n", cmdutil.Cell(tg.Name))
	return err
}
