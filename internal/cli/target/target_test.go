package target

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clitest"
)

// These tests check schedctl's half of the target commands: that each
// command line makes the request it should (through the real cobra
// command, its runF capturing the options) and prints an answer as it
// should (the real run function against fakeAPI). daemon_test.go runs
// them against a real schedd.

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// fakeAPI answers the target calls with canned answers and records them.
type fakeAPI struct {
	mu    sync.Mutex
	calls []string
	reqs  []api.TargetRequest

	saved   *api.TargetSaved
	list    *api.TargetList
	target  *api.Target
	test    *api.TargetTest
	err     error // when set, every call fails with it
	deleted *api.Target
}

var _ API = (*fakeAPI)(nil)

func (a *fakeAPI) call(c string, r *api.TargetRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, c)
	if r != nil {
		a.reqs = append(a.reqs, *r)
	}
	return a.err
}

func (a *fakeAPI) CreateTarget(_ context.Context, r api.TargetRequest) (*api.TargetSaved, error) {
	if err := a.call("create "+r.Name, &r); err != nil {
		return nil, err
	}
	return a.saved, nil
}
func (a *fakeAPI) ListTargets(context.Context) (*api.TargetList, error) {
	if err := a.call("list", nil); err != nil {
		return nil, err
	}
	return a.list, nil
}
func (a *fakeAPI) GetTarget(_ context.Context, name string) (*api.Target, error) {
	if err := a.call("get "+name, nil); err != nil {
		return nil, err
	}
	return a.target, nil
}
func (a *fakeAPI) UpdateTarget(_ context.Context, name string, r api.TargetRequest) (*api.TargetSaved, error) {
	if err := a.call("update "+name, &r); err != nil {
		return nil, err
	}
	return a.saved, nil
}
func (a *fakeAPI) DeleteTarget(_ context.Context, name string) (*api.Target, error) {
	if err := a.call("delete "+name, nil); err != nil {
		return nil, err
	}
	return a.deleted, nil
}
func (a *fakeAPI) TestTarget(_ context.Context, name string) (*api.TargetTest, error) {
	if err := a.call("test "+name, nil); err != nil {
		return nil, err
	}
	return a.test, nil
}

func webhookTarget() api.Target {
	return api.Target{Name: "billing", Tenant: "acme", Kind: "webhook",
		Config:    json.RawMessage(`{"url":"https://billing.example.com/hooks/sched","headers":{"X-Env":"(redacted)","Authorization":"(redacted)"},"timeout":"5s"}`),
		SecretSet: true, Version: 2, CreatedAt: clitest.FixedNow.Add(-time.Hour), UpdatedAt: clitest.FixedNow}
}

func natsTarget() api.Target {
	return api.Target{Name: "orders", Tenant: "acme", Kind: "nats", Config: json.RawMessage(`{"subject":"orders.fire"}`),
		Version: 1, CreatedAt: clitest.FixedNow, UpdatedAt: clitest.FixedNow}
}

// compact is a request's config as compact JSON.
func compact(t *testing.T, b json.RawMessage) string {
	t.Helper()
	return cmdutil.CompactJSON(b)
}

// writeFile writes content to a file of the test's and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// flagCase is one command line and the request it must make, or the
// usage error it must be refused with (before any call).
type flagCase struct {
	name    string
	args    []string
	stdin   string
	kind    string
	config  string
	secret  string
	rotate  bool
	wantErr string
	// never is text an error must not hold (a header's value, a secret).
	never string
}

// runFlagCases runs each case through build's command, its runF
// capturing the request.
func runFlagCases(t *testing.T, cases []flagCase, build func(f *cmdutil.Factory, got *api.TargetRequest, name *string) *cobra.Command) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := clitest.NewFactory(false)
			f.In = strings.NewReader(tc.stdin)
			var got api.TargetRequest
			var name string
			cmd := build(f, &got, &name)
			// As the root does: a flag's error is invalid input.
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.UsageError{Err: err} })
			err := clitest.Exec(t, cmd, tc.args...)
			if tc.wantErr != "" {
				clitest.WantErr(t, err, tc.wantErr, cmdutil.ExitInvalid)
				if name != "" {
					t.Errorf("runF ran with %+v", got)
				}
				if tc.never != "" && err != nil && strings.Contains(err.Error(), tc.never) {
					t.Errorf("error %q shows %q", err, tc.never)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if name != tc.args[0] {
				t.Errorf("name %q", name)
			}
			if got.Kind != tc.kind || compact(t, got.Config) != tc.config || got.Secret != tc.secret || got.RotateSecret != tc.rotate {
				t.Errorf("request kind %q config %s secret %q rotate %v\nwant kind %q config %s secret %q rotate %v",
					got.Kind, got.Config, got.Secret, got.RotateSecret, tc.kind, tc.config, tc.secret, tc.rotate)
			}
		})
	}
}

// TestCreateFlags: create makes the kind and its settings from exactly
// one of --nats and --webhook and that kind's options, reads a secret
// from --secret-file, and refuses anything else as invalid input that
// names the flag, never echoing a header's value or a secret.
func TestCreateFlags(t *testing.T) {
	secretFile := writeFile(t, "secret", "\n  "+testSecret+"  \n")
	notSecret := writeFile(t, "not-secret", "hunter2-password\n")
	empty := writeFile(t, "empty", " \n")
	twoWords := writeFile(t, "two", testSecret+" "+testSecret+"\n")
	cases := []flagCase{
		{name: "nats", args: []string{"orders", "--nats", "orders.fire"}, kind: "nats", config: `{"subject":"orders.fire"}`},
		{name: "nats with url and creds", args: []string{"orders", "--nats", "orders.fire", "--nats-url", "nats://nats.internal:4222", "--nats-creds", "/etc/sched/nats.creds"},
			kind: "nats", config: `{"subject":"orders.fire","url":"nats://nats.internal:4222","creds_file":"/etc/sched/nats.creds"}`},
		{name: "webhook", args: []string{"billing", "--webhook", "https://b.example.com/h"}, kind: "webhook", config: `{"url":"https://b.example.com/h"}`},
		{name: "webhook with headers and timeout", args: []string{"billing", "--webhook", "https://b.example.com/h",
			"--header", "Authorization=Bearer a=b", "--header", "X-Env=", "--timeout", "1m30s"},
			kind: "webhook", config: `{"url":"https://b.example.com/h","headers":{"Authorization":"Bearer a=b","X-Env":""},"timeout":"1m30s"}`},
		{name: "secret file, trimmed", args: []string{"billing", "--webhook", "https://b.example.com/h", "--secret-file", secretFile},
			kind: "webhook", config: `{"url":"https://b.example.com/h"}`, secret: testSecret},
		{name: "secret from stdin", args: []string{"billing", "--webhook", "https://b.example.com/h", "--secret-file", "-"}, stdin: testSecret + "\n",
			kind: "webhook", config: `{"url":"https://b.example.com/h"}`, secret: testSecret},

		{name: "no kind", args: []string{"orders"}, wantErr: "give --nats SUBJECT or --webhook URL"},
		{name: "both kinds", args: []string{"orders", "--nats", "a", "--webhook", "https://b.example.com/h"}, wantErr: "give --nats or --webhook, not both"},
		{name: "empty subject", args: []string{"orders", "--nats", ""}, wantErr: "--nats: the subject is empty"},
		{name: "empty url", args: []string{"orders", "--webhook", " "}, wantErr: "--webhook: the URL is empty"},
		{name: "webhook flags on nats", args: []string{"orders", "--nats", "a", "--header", "A=b", "--timeout", "1s"},
			wantErr: "--header, --timeout: only for a --webhook target, not --nats"},
		{name: "secret on nats", args: []string{"orders", "--nats", "a", "--secret-file", secretFile}, wantErr: "--secret-file: only for a --webhook target"},
		{name: "nats flags on webhook", args: []string{"orders", "--webhook", "https://b.example.com/h", "--nats-creds", "x"},
			wantErr: "--nats-creds: only for a --nats target, not --webhook"},
		{name: "header with a colon", args: []string{"b", "--webhook", "https://b.example.com/h", "--header", "Authorization: Bearer s3cr3t"},
			wantErr: `--header "Authorization...": want NAME=VALUE`, never: "s3cr3t"},
		{name: "header without =", args: []string{"b", "--webhook", "https://b.example.com/h", "--header", "X-Env"},
			wantErr: `--header "X-Env": want NAME=VALUE`},
		{name: "header without a name", args: []string{"b", "--webhook", "https://b.example.com/h", "--header", "=s3cr3t"},
			wantErr: "the header's name is empty", never: "s3cr3t"},
		{name: "header name not a token", args: []string{"b", "--webhook", "https://b.example.com/h", "--header", "X Env=s3cr3t"},
			wantErr: `"X Env" is not a header name`, never: "s3cr3t"},
		{name: "header value with a newline", args: []string{"b", "--webhook", "https://b.example.com/h", "--header", "X-Env=a\nEvil: s3cr3t"},
			wantErr: "--header X-Env=...: its value holds a control character", never: "s3cr3t"},
		{name: "header twice", args: []string{"b", "--webhook", "https://b.example.com/h", "--header", "X-Env=a", "--header", "x-env=s3cr3t"},
			wantErr: "--header x-env=...: given twice (also as X-Env)", never: "s3cr3t"},
		{name: "zero timeout", args: []string{"b", "--webhook", "https://b.example.com/h", "--timeout", "0s"}, wantErr: "--timeout 0s: want a positive duration"},
		{name: "bad timeout", args: []string{"b", "--webhook", "https://b.example.com/h", "--timeout", "soon"}, wantErr: `invalid argument "soon" for "--timeout"`},
		{name: "secret file missing", args: []string{"b", "--webhook", "https://b.example.com/h", "--secret-file", filepath.Join(t.TempDir(), "nope")},
			wantErr: "--secret-file: open"},
		{name: "secret file not a secret", args: []string{"b", "--webhook", "https://b.example.com/h", "--secret-file", notSecret},
			wantErr: "not a Standard Webhooks secret", never: "hunter2"},
		{name: "secret file empty", args: []string{"b", "--webhook", "https://b.example.com/h", "--secret-file", empty}, wantErr: "empty; want a secret"},
		{name: "secret file two words", args: []string{"b", "--webhook", "https://b.example.com/h", "--secret-file", twoWords},
			wantErr: "more than one word", never: testSecret},
		{name: "rotate is update's", args: []string{"b", "--webhook", "https://b.example.com/h", "--rotate-secret"}, wantErr: "unknown flag: --rotate-secret"},
		{name: "name in upper case", args: []string{"Orders", "--nats", "a"}, wantErr: `target name: "Orders": use lowercase letters (orders)`},
		{name: "name of dots", args: []string{"..", "--nats", "a"}, wantErr: "target name: "},
	}
	runFlagCases(t, cases, func(f *cmdutil.Factory, got *api.TargetRequest, name *string) *cobra.Command {
		return NewCmdCreate(f, func(o *CreateOptions) error {
			*got, *name = o.Request, o.Request.Name
			return nil
		})
	})
}

// TestUpdateFlags: update takes the same settings as create (the whole
// of them: a PUT), and --rotate-secret or --secret-file, not both, on a
// webhook only.
func TestUpdateFlags(t *testing.T) {
	secretFile := writeFile(t, "secret", testSecret+"\n")
	cases := []flagCase{
		{name: "nats", args: []string{"orders", "--nats", "orders.v2"}, kind: "nats", config: `{"subject":"orders.v2"}`},
		{name: "webhook keeps its secret", args: []string{"billing", "--webhook", "https://b.example.com/h", "--header", "A=b"},
			kind: "webhook", config: `{"url":"https://b.example.com/h","headers":{"A":"b"}}`},
		{name: "rotate", args: []string{"billing", "--webhook", "https://b.example.com/h", "--rotate-secret"},
			kind: "webhook", config: `{"url":"https://b.example.com/h"}`, rotate: true},
		{name: "secret file", args: []string{"billing", "--webhook", "https://b.example.com/h", "--secret-file", secretFile},
			kind: "webhook", config: `{"url":"https://b.example.com/h"}`, secret: testSecret},

		{name: "no settings", args: []string{"billing"}, wantErr: "give --nats SUBJECT or --webhook URL"},
		{name: "rotate alone", args: []string{"billing", "--rotate-secret"}, wantErr: "give --nats SUBJECT or --webhook URL"},
		{name: "rotate on nats", args: []string{"orders", "--nats", "a", "--rotate-secret"}, wantErr: "--rotate-secret: only for a --webhook target"},
		{name: "rotate and a secret", args: []string{"billing", "--webhook", "https://b.example.com/h", "--rotate-secret", "--secret-file", secretFile},
			wantErr: "give --secret-file or --rotate-secret, not both"},
		{name: "bad header", args: []string{"billing", "--webhook", "https://b.example.com/h", "--header", "Authorization:x"},
			wantErr: `--header "Authorization...": want NAME=VALUE`},
	}
	runFlagCases(t, cases, func(f *cmdutil.Factory, got *api.TargetRequest, name *string) *cobra.Command {
		return NewCmdUpdate(f, func(o *UpdateOptions) error {
			*got, *name = o.Request, o.Name
			return nil
		})
	})
}

// run is one command's run: its real command line and run function,
// against a, with -o json when json; it returns stdout, stderr and the
// error.
func run(t *testing.T, a *fakeAPI, tty, json bool, args ...string) (string, string, error) {
	t.Helper()
	f, out, errOut := clitest.NewFactory(tty)
	apiF := func() (API, error) { return a, nil }
	var cmd *cobra.Command
	switch args[0] {
	case "create":
		cmd = NewCmdCreate(f, func(o *CreateOptions) error { o.API, o.JSON = apiF, json; return createRun(o) })
	case "list":
		cmd = NewCmdList(f, func(o *ListOptions) error { o.API, o.JSON = apiF, json; return listRun(o) })
	case "get":
		cmd = NewCmdGet(f, func(o *GetOptions) error { o.API, o.JSON = apiF, json; return getRun(o) })
	case "update":
		cmd = NewCmdUpdate(f, func(o *UpdateOptions) error { o.API, o.JSON = apiF, json; return updateRun(o) })
	case "delete":
		cmd = NewCmdDelete(f, func(o *DeleteOptions) error { o.API, o.JSON = apiF, json; return deleteRun(o) })
	case "test":
		cmd = NewCmdTest(f, func(o *TestOptions) error { o.API, o.JSON = apiF, json; return testRun(o) })
	default:
		t.Fatalf("no command %q", args[0])
	}
	err := clitest.Exec(t, cmd, args[1:]...)
	return out.String(), errOut.String(), err
}

// jsonKeys are the sorted top-level keys of a JSON object.
func jsonKeys(t *testing.T, v any) string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %v", v)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

const targetKeys = "config created_at kind name secret_set tenant updated_at version"

// TestCreateOutput: a secret in the answer is printed once, alone on the
// first line, with the notice on stderr, then the target; none, no line
// and no notice; -o json is the whole answer.
func TestCreateOutput(t *testing.T) {
	a := &fakeAPI{saved: &api.TargetSaved{Target: webhookTarget(), Secret: testSecret}}
	out, errOut, err := run(t, a, true, false, "create", "billing", "--webhook", "https://billing.example.com/hooks/sched")
	if err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, "target-create-tty.golden", out)
	if errOut != SecretNotice+"\n" || strings.Count(out, testSecret) != 1 {
		t.Errorf("stderr %q; stdout %q", errOut, out)
	}

	out, _, _ = run(t, a, false, false, "create", "billing", "--webhook", "https://billing.example.com/hooks/sched")
	if want := "secret: " + testSecret + "\nNAME\tKIND\tDESTINATION\tSECRET\tVERSION\tUPDATED\nbilling\twebhook\thttps://billing.example.com/hooks/sched\tset\t2\t2027-03-13T12:00:00Z\n"; out != want {
		t.Errorf("plain create %q, want %q", out, want)
	}

	out, errOut, _ = run(t, a, false, true, "create", "billing", "--webhook", "https://billing.example.com/hooks/sched")
	v := clitest.MustJSON(t, []byte(out))
	if got := jsonKeys(t, v); got != "secret target" || errOut != SecretNotice+"\n" {
		t.Errorf("JSON keys %s, stderr %q", got, errOut)
	}
	if got := jsonKeys(t, v.(map[string]any)["target"]); got != targetKeys {
		t.Errorf("target JSON keys %s", got)
	}

	n := &fakeAPI{saved: &api.TargetSaved{Target: natsTarget()}}
	out, errOut, err = run(t, n, false, false, "create", "orders", "--nats", "orders.fire")
	if err != nil || errOut != "" || out != "NAME\tKIND\tDESTINATION\tSECRET\tVERSION\tUPDATED\norders\tnats\torders.fire\tnone\t1\t2027-03-13T12:00:00Z\n" {
		t.Errorf("nats create: %v, stderr %q, stdout %q", err, errOut, out)
	}
	out, _, _ = run(t, n, false, true, "create", "orders", "--nats", "orders.fire")
	if got := jsonKeys(t, clitest.MustJSON(t, []byte(out))); got != "target" {
		t.Errorf("nats JSON keys %s", got)
	}
	if calls := strings.Join(n.calls, ","); calls != "create orders,create orders" {
		t.Errorf("calls %s", calls)
	}
}

// TestUpdateOutput: an update that made a new secret prints it once, as
// create does; one that kept it prints the target alone.
func TestUpdateOutput(t *testing.T) {
	a := &fakeAPI{saved: &api.TargetSaved{Target: webhookTarget(), Secret: testSecret}}
	out, errOut, err := run(t, a, false, false, "update", "billing", "--webhook", "https://billing.example.com/hooks/sched", "--rotate-secret")
	if err != nil || errOut != SecretNotice+"\n" || !strings.HasPrefix(out, "secret: "+testSecret+"\nNAME\tKIND\tDESTINATION\tSECRET\tVERSION\tUPDATED\nbilling\t") {
		t.Errorf("rotate: %v, stderr %q, stdout %q", err, errOut, out)
	}
	if len(a.reqs) != 1 || !a.reqs[0].RotateSecret || a.calls[0] != "update billing" {
		t.Errorf("sent %v %+v", a.calls, a.reqs)
	}
	a.saved.Secret = ""
	out, errOut, _ = run(t, a, false, false, "update", "billing", "--webhook", "https://billing.example.com/hooks/sched")
	if errOut != "" || strings.Contains(out, "secret:") {
		t.Errorf("kept secret: stderr %q, stdout %q", errOut, out)
	}
}

// TestListAndGetOutput: list's columns, get's field/value rows of each
// kind with the headers as schedd shows them (redacted), and their JSON.
func TestListAndGetOutput(t *testing.T) {
	odd := api.Target{Name: "later", Tenant: "acme", Kind: "kafka", Config: json.RawMessage(`{"topic":"t"}`),
		Version: 1, CreatedAt: clitest.FixedNow, UpdatedAt: clitest.FixedNow}
	a := &fakeAPI{list: &api.TargetList{Targets: []api.Target{webhookTarget(), odd, natsTarget()}}}
	out, _, err := run(t, a, true, false, "list")
	if err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, "target-list-tty.golden", out)
	out, _, _ = run(t, a, false, true, "list")
	list, ok := clitest.MustJSON(t, []byte(out)).([]any)
	if !ok || len(list) != 3 || jsonKeys(t, list[0]) != targetKeys {
		t.Errorf("list JSON %s", out)
	}
	empty := &fakeAPI{list: &api.TargetList{}}
	if out, _, _ = run(t, empty, false, true, "list"); strings.TrimSpace(out) != "[]" {
		t.Errorf("empty list JSON %q", out)
	}
	if out, _, _ = run(t, empty, true, false, "list"); out != "NAME  KIND  DESTINATION  SECRET  VERSION  UPDATED\n" {
		t.Errorf("empty list %q", out)
	}

	for _, tc := range []struct {
		golden string
		target api.Target
	}{
		{"target-get-webhook-tty.golden", webhookTarget()},
		{"target-get-nats-tty.golden", func() api.Target {
			n := natsTarget()
			n.Config = json.RawMessage(`{"subject":"orders.fire","creds_file":"/etc/sched/nats.creds","compression":true}`)
			return n
		}()},
		{"target-get-other-tty.golden", odd},
	} {
		g := &fakeAPI{target: &tc.target}
		out, _, err := run(t, g, true, false, "get", tc.target.Name)
		if err != nil {
			t.Fatal(err)
		}
		clitest.Golden(t, tc.golden, out)
		if g.calls[0] != "get "+tc.target.Name {
			t.Errorf("calls %v", g.calls)
		}
	}
	g := &fakeAPI{target: func() *api.Target { w := webhookTarget(); return &w }()}
	out, _, _ = run(t, g, false, false, "get", "billing")
	if !strings.Contains(out, "header\tAuthorization: (redacted)\nheader\tX-Env: (redacted)\ntimeout\t5s\nsecret\tset\n") {
		t.Errorf("plain get:\n%s", out)
	}
	out, _, _ = run(t, g, false, true, "get", "billing")
	var back api.Target
	if err := json.Unmarshal([]byte(out), &back); err != nil || !back.SecretSet || back.Name != "billing" {
		t.Errorf("get JSON %v %s", err, out)
	}
}

// TestDeleteOutput: delete prints one line, -o json the target; a
// conflict (schedules still name it) is a failure, exit 1, naming the
// command and saying schedd's reason.
func TestDeleteOutput(t *testing.T) {
	w := webhookTarget()
	a := &fakeAPI{deleted: &w}
	out, _, err := run(t, a, false, false, "delete", "billing")
	if err != nil || out != "deleted target billing\n" || a.calls[0] != "delete billing" {
		t.Errorf("delete: %v %q %v", err, out, a.calls)
	}
	out, _, _ = run(t, a, false, true, "delete", "billing")
	if got := jsonKeys(t, clitest.MustJSON(t, []byte(out))); got != targetKeys {
		t.Errorf("delete JSON keys %s", got)
	}

	msg := `target "billing" is named by 1 schedules ACTIVE or PAUSED: cancel them or give them another target first`
	a.err = &client.Error{Status: 409, Code: api.CodeConflict, Message: msg}
	out, _, err = run(t, a, false, false, "delete", "billing")
	clitest.WantErr(t, err, "target delete billing: conflict: "+msg, cmdutil.ExitFailure)
	if out != "" {
		t.Errorf("stdout %q", out)
	}
	a.err = &client.Error{Status: 404, Code: api.CodeNotFound, Message: `target "billing" not found`}
	_, _, err = run(t, a, false, false, "get", "billing")
	clitest.WantErr(t, err, `target get billing: not found: target "billing" not found`, cmdutil.ExitFailure)
	a.err = &client.Error{Status: 400, Code: api.CodeInvalidArgument, Message: "config: url: bad"}
	_, _, err = run(t, a, false, false, "create", "billing", "--webhook", "ftp://x")
	clitest.WantErr(t, err, "target create billing: invalid argument: config: url: bad", cmdutil.ExitInvalid)
}

// TestTestOutput: test prints delivered (exit 0) or not delivered, with
// whether a delivery would retry, the wait asked for and the test
// occurrence's id, exiting 1 without another line of error (the output
// says it).
func TestTestOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  api.TargetTest
		out  string
	}{
		{"delivered", api.TargetTest{Delivered: true, OccurrenceID: "test_20270313T120000.000Z"},
			"delivered\ntest occurrence: test_20270313T120000.000Z\n"},
		{"permanent", api.TargetTest{Permanent: true, Error: `webhook answered 404 Not Found: "no such hook"`, OccurrenceID: "test_1"},
			"not delivered (permanent): webhook answered 404 Not Found: \"no such hook\"\ntest occurrence: test_1\n"},
		{"retried", api.TargetTest{Error: "webhook answered 503 Service Unavailable", RetryAfterSeconds: 90, OccurrenceID: "test_2"},
			"not delivered (will be retried): webhook answered 503 Service Unavailable (retry after 1m30s)\ntest occurrence: test_2\n"},
		{"control characters", api.TargetTest{Error: "dial: \x1b[31mred\nline", OccurrenceID: "test_3"},
			"not delivered (will be retried): dial: \\x1b[31mred\\nline\ntest occurrence: test_3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAPI{test: &tc.res}
			out, errOut, err := run(t, a, false, false, "test", "billing")
			if out != tc.out || errOut != "" || a.calls[0] != "test billing" {
				t.Errorf("out %q, want %q; stderr %q; calls %v", out, tc.out, errOut, a.calls)
			}
			var se *cmdutil.StatusError
			switch {
			case tc.res.Delivered && err != nil:
				t.Errorf("delivered: %v", err)
			case !tc.res.Delivered && (cmdutil.ExitCode(err) != cmdutil.ExitFailure || !errors.As(err, &se) || !se.Silent):
				t.Errorf("not delivered: exit %d (%v), want a silent %d", cmdutil.ExitCode(err), err, cmdutil.ExitFailure)
			}
			out, _, err = run(t, a, false, true, "test", "billing")
			var back api.TargetTest
			if jerr := json.Unmarshal([]byte(out), &back); jerr != nil || back != tc.res {
				t.Errorf("JSON %v %s", jerr, out)
			}
			if (err == nil) != tc.res.Delivered {
				t.Errorf("JSON: error %v, delivered %v", err, tc.res.Delivered)
			}
		})
	}
}
