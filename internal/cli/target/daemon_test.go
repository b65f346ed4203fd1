package target_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/cli/cmdutil"
	"github.com/sched-dev/sched/internal/cli/internal/clidaemon"
	"github.com/sched-dev/sched/internal/cli/target"
)

// delivery is one request a receiver got.
type delivery struct {
	method, path string
	header       http.Header
	body         []byte
}

// receiver is a webhook endpoint on loopback that records every request
// and answers with the status it is set to (200 at first).
type receiver struct {
	url        string
	status     atomic.Int64
	retryAfter atomic.Value // string; "" for no Retry-After

	mu   sync.Mutex
	got  []delivery
	seen chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{seen: make(chan struct{}, 100)}
	r.status.Store(http.StatusOK)
	r.retryAfter.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Method, req.URL.Path, req.Header.Clone(), b})
		r.mu.Unlock()
		if ra := r.retryAfter.Load().(string); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(int(r.status.Load()))
		io.WriteString(w, "no such hook")
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.") {
		t.Fatalf("receiver is not on loopback: %s", srv.URL)
	}
	r.url = srv.URL
	return r
}

// take returns the requests received so far and forgets them.
func (r *receiver) take() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// verify checks a delivery's Standard Webhooks signature under secret,
// computed here from the scheme's definition: webhook-signature holds
// "v1," and the base64 of HMAC-SHA256 over "id.timestamp.body", keyed
// with the base64-decoded part of the secret after "whsec_". It returns
// the webhook-id.
func verify(t *testing.T, d delivery, secret string) string {
	t.Helper()
	id, ts, sigs := d.header.Get("webhook-id"), d.header.Get("webhook-timestamp"), d.header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		t.Fatalf("a delivery without the Standard Webhooks headers: %v", d.header)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q: %v", ts, err)
	}
	if age := time.Since(time.Unix(sec, 0)); age < -time.Minute || age > 5*time.Minute {
		t.Errorf("webhook-timestamp %s is %s from now", ts, age)
	}
	enc, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		t.Fatalf("secret %q does not start with whsec_", secret)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatalf("secret: %v", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(d.body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		v, b64, _ := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if v == "v1" && err == nil && hmac.Equal(got, want) {
			return id
		}
	}
	t.Errorf("webhook-signature %q does not verify under the secret", sigs)
	return id
}

// newSecret is a Standard Webhooks secret of our own: whsec_ and the
// base64 of 32 random bytes.
func newSecret(t *testing.T) string {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// secretOf returns the secret printed on the first line of a create's or
// an update's output.
func secretOf(t *testing.T, out string) string {
	t.Helper()
	first, _, _ := strings.Cut(out, "\n")
	s, ok := strings.CutPrefix(first, "secret: ")
	if !ok || !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("first line %q, want secret: whsec_...\n%s", first, out)
	}
	return s
}

// daemon is a real schedd for one test and run, which runs schedctl
// against it and returns stdout and stderr when the exit code is want.
func daemon(t *testing.T) (*clidaemon.Daemon, func(want int, args ...string) (string, string)) {
	d := clidaemon.New(t, clidaemon.Config{Start: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)})
	return d, func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := d.Run(t, false, args...)
		if code != want {
			t.Fatalf("schedctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out, errOut
	}
}

// TestTargetCommandsAgainstTheDaemon runs the target commands against a
// real schedd (its Unix socket, the default tenant): a webhook's secret
// shown once and never again, an update that replaces every setting, a
// schedule that names a target holding it from deletion, a second tenant
// that can neither see nor name it, and a nats target.
func TestTargetCommandsAgainstTheDaemon(t *testing.T) {
	_, run := daemon(t)
	rcv := newReceiver(t) // receives nothing here

	// Created: the secret printed once, first, with the notice.
	out, errOut := run(0, "target", "create", "hook", "--webhook", rcv.url+"/hook", "--header", "Authorization=Bearer t0ken-s3cr3t", "--timeout", "5s")
	secret := secretOf(t, out)
	if !strings.Contains(errOut, target.SecretNotice) || strings.Count(out, secret) != 1 {
		t.Errorf("create: stderr %q\n%s", errOut, out)
	}
	if rest := strings.SplitN(out, "\n", 2)[1]; !strings.HasPrefix(rest, "NAME\tKIND\tDESTINATION\tSECRET\tVERSION\tUPDATED\nhook\twebhook\t"+rcv.url+"/hook\tset\t1\t") {
		t.Errorf("create's target row %q", rest)
	}

	// Never shown again, nor the header's value.
	noSecrets := func(what string) {
		t.Helper()
		for _, args := range [][]string{
			{"target", "get", "hook"}, {"target", "get", "hook", "-o", "json"},
			{"target", "list"}, {"target", "list", "-o", "json"},
		} {
			out, errOut := run(0, args...)
			if strings.Contains(out+errOut, "whsec_") || strings.Contains(out+errOut, "t0ken") {
				t.Errorf("%s: %v shows a secret or a header's value:\n%s%s", what, args, out, errOut)
			}
		}
	}
	noSecrets("after create")
	out, _ = run(0, "target", "get", "hook")
	for _, want := range []string{"kind\twebhook\n", "url\t" + rcv.url + "/hook\n", "header\tAuthorization: (redacted)\n", "timeout\t5s\n",
		"secret\tset\n", "tenant\tdefault\n", "version\t1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("get lacks %q:\n%s", want, out)
		}
	}
	var got api.Target
	out, _ = run(0, "target", "get", "hook", "-o", "json")
	if err := json.Unmarshal([]byte(out), &got); err != nil || !got.SecretSet || got.Kind != "webhook" || got.Version != 1 {
		t.Fatalf("get JSON %v: %s", err, out)
	}
	var fields map[string]any
	json.Unmarshal([]byte(out), &fields)
	if _, ok := fields["secret"]; ok {
		t.Errorf("get JSON has a secret field: %s", out)
	}
	var list []api.Target
	out, _ = run(0, "target", "list", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || !list[0].SecretSet {
		t.Errorf("list JSON %v: %s", err, out)
	}

	// An update replaces every setting (the header not repeated is gone)
	// and keeps the secret: none printed. A rotation prints the new one.
	out, errOut = run(0, "target", "update", "hook", "--webhook", rcv.url+"/v2")
	if strings.Contains(out, "secret:") || errOut != "" || !strings.HasPrefix(out, "NAME\tKIND\tDESTINATION\tSECRET\tVERSION\tUPDATED\nhook\twebhook\t"+rcv.url+"/v2\tset\t2\t") {
		t.Errorf("update keeping the secret: %q %q", out, errOut)
	}
	out, _ = run(0, "target", "get", "hook")
	if strings.Contains(out, "header\t") || !strings.Contains(out, "headers\tnone\n") || !strings.Contains(out, "timeout\tdefault\n") || !strings.Contains(out, "url\t"+rcv.url+"/v2\n") {
		t.Errorf("after an update without --header or --timeout:\n%s", out)
	}
	out, errOut = run(0, "target", "update", "hook", "--webhook", rcv.url+"/v2", "--rotate-secret", "-o", "json")
	var saved api.TargetSaved
	if err := json.Unmarshal([]byte(out), &saved); err != nil || !strings.HasPrefix(saved.Secret, "whsec_") || saved.Secret == secret ||
		saved.Target.Version != 3 || !strings.Contains(errOut, target.SecretNotice) {
		t.Errorf("rotate -o json: %v %s %q", err, out, errOut)
	}
	noSecrets("after a rotation")

	// A secret of our own, from a file, is the target's.
	own := newSecret(t)
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(own+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ = run(0, "target", "create", "mine", "--webhook", rcv.url+"/mine", "--secret-file", file); secretOf(t, out) != own {
		t.Errorf("create --secret-file printed another secret")
	}

	// A schedule that names the target holds it from deletion until it is
	// canceled.
	run(0, "create", "--name", "fire", "--target", "hook", "--every", "1h")
	var sc api.Schedule
	out, _ = run(0, "get", "fire", "-o", "json")
	if err := json.Unmarshal([]byte(out), &sc); err != nil || sc.Target != "hook" {
		t.Errorf("get -o json of a schedule with a target: %v %s", err, out)
	}
	_, errOut = run(cmdutil.ExitFailure, "target", "delete", "hook")
	if !strings.Contains(errOut, "schedctl: target delete hook: conflict: ") || !strings.Contains(errOut, "ACTIVE or PAUSED") {
		t.Errorf("delete of a target in use: %q", errOut)
	}
	run(0, "target", "get", "hook")

	// Another tenant neither sees nor names it.
	var other api.TenantCreated
	out, _ = run(0, "tenant", "create", "other", "-o", "json")
	if err := json.Unmarshal([]byte(out), &other); err != nil || other.Token == "" {
		t.Fatalf("tenant create: %v %s", err, out)
	}
	tok := other.Token
	for _, args := range [][]string{{"target", "get", "hook"}, {"target", "test", "hook"}, {"target", "delete", "hook"},
		{"target", "update", "hook", "--nats", "x"}} {
		_, errOut := run(cmdutil.ExitFailure, append([]string{"--token", tok}, args...)...)
		if want := "schedctl: " + strings.Join(args[:3], " ") + ": not found"; !strings.HasPrefix(errOut, want) {
			t.Errorf("%v as another tenant: %q, want %q", args, errOut, want)
		}
	}
	if out, _ = run(0, "--token", tok, "target", "list", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("another tenant lists %s", out)
	}
	_, errOut = run(cmdutil.ExitInvalid, "--token", tok, "create", "--name", "theirs", "--target", "hook", "--every", "1h")
	if !strings.Contains(errOut, `"hook": the tenant has no such target`) {
		t.Errorf("another tenant naming the target: %q", errOut)
	}
	// Its own target of the same name is its own.
	run(0, "--token", tok, "target", "create", "hook", "--nats", "theirs.fire")
	if out, _ = run(0, "target", "get", "hook"); !strings.Contains(out, "kind\twebhook\n") {
		t.Errorf("another tenant's target of the same name changed ours:\n%s", out)
	}

	run(0, "cancel", "fire")
	if out, _ = run(0, "target", "delete", "hook"); out != "deleted target hook\n" {
		t.Errorf("delete: %q", out)
	}
	run(cmdutil.ExitFailure, "target", "get", "hook")
	out, _ = run(0, "target", "delete", "mine", "-o", "json")
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Name != "mine" || !got.SecretSet {
		t.Errorf("delete JSON %v %s", err, out)
	}
	if out, _ = run(0, "--token", tok, "target", "get", "hook"); !strings.Contains(out, "subject\ttheirs.fire\n") {
		t.Errorf("deleting ours touched theirs:\n%s", out)
	}

	// A nats target: no secret, its subject in its settings. Nothing is
	// published.
	out, errOut = run(0, "target", "create", "orders", "--nats", "orders.fire")
	if strings.Contains(out, "secret:") || errOut != "" || !strings.HasPrefix(out, "NAME\tKIND\tDESTINATION\tSECRET\tVERSION\tUPDATED\norders\tnats\torders.fire\tnone\t1\t") {
		t.Errorf("nats create: %q %q", out, errOut)
	}
	out, _ = run(0, "target", "get", "orders", "-o", "json")
	var cfg struct{ Subject string }
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Kind != "nats" || got.SecretSet {
		t.Fatalf("nats get JSON %v %s", err, out)
	}
	if err := json.Unmarshal(got.Config, &cfg); err != nil || cfg.Subject != "orders.fire" {
		t.Errorf("nats config %v %s", err, got.Config)
	}
	if dl := rcv.take(); len(dl) != 0 {
		t.Errorf("%d requests reached the receiver; no command here delivers", len(dl))
	}
}

// TestTargetTestDeliversSignedFirings: schedctl target test against a
// real schedd delivers one POST to a webhook receiver on loopback, signed
// by the Standard Webhooks scheme (verified here with its own HMAC code)
// with the secret create printed, and reports a refusal (404: permanent;
// 503 with Retry-After: retried) with exit status 1.
func TestTargetTestDeliversSignedFirings(t *testing.T) {
	_, run := daemon(t)
	rcv := newReceiver(t)
	out, _ := run(0, "target", "create", "hook", "--webhook", rcv.url+"/hook", "--header", "Authorization=Bearer t0ken")
	secret := secretOf(t, out)

	// A test firing: one POST, signed with the secret, carrying the
	// header given.
	out, errOut := run(0, "target", "test", "hook")
	dl := rcv.take()
	if len(dl) != 1 {
		t.Fatalf("%d deliveries, want 1", len(dl))
	}
	id := verify(t, dl[0], secret)
	var body struct {
		Data struct {
			OccurrenceID string          `json:"occurrence_id"`
			Payload      json.RawMessage `json:"payload"`
		} `json:"data"`
	}
	if err := json.Unmarshal(dl[0].body, &body); err != nil || body.Data.OccurrenceID != id || string(body.Data.Payload) != `{"test":true}` {
		t.Errorf("delivery's body %v: %s", err, dl[0].body)
	}
	if dl[0].method != "POST" || dl[0].path != "/hook" || dl[0].header.Get("Authorization") != "Bearer t0ken" {
		t.Errorf("delivery %s %s %v", dl[0].method, dl[0].path, dl[0].header)
	}
	if want := "delivered\ntest occurrence: " + id + "\n"; out != want || errOut != "" {
		t.Errorf("test: %q, want %q; stderr %q", out, want, errOut)
	}
	var tt api.TargetTest
	out, _ = run(0, "target", "test", "hook", "-o", "json")
	if err := json.Unmarshal([]byte(out), &tt); err != nil || !tt.Delivered || tt.OccurrenceID != verify(t, rcv.take()[0], secret) {
		t.Errorf("test JSON %v: %s", err, out)
	}

	// Refused for good: exit 1, the status in the output, nothing more on
	// stderr.
	rcv.status.Store(http.StatusNotFound)
	out, errOut = run(cmdutil.ExitFailure, "target", "test", "hook")
	if !strings.HasPrefix(out, `not delivered (permanent): webhook answered 404 Not Found: "no such hook"`+"\n") || errOut != "" {
		t.Errorf("test, 404: stdout %q stderr %q", out, errOut)
	}
	out, _ = run(cmdutil.ExitFailure, "target", "test", "hook", "-o", "json")
	if err := json.Unmarshal([]byte(out), &tt); err != nil || tt.Delivered || !tt.Permanent || !strings.Contains(tt.Error, "404") {
		t.Errorf("test JSON, 404: %v %s", err, out)
	}
	// Refused for now: a retry's wait.
	rcv.status.Store(http.StatusServiceUnavailable)
	rcv.retryAfter.Store("30")
	out, _ = run(cmdutil.ExitFailure, "target", "test", "hook")
	if !strings.HasPrefix(out, "not delivered (will be retried): webhook answered 503 Service Unavailable") || !strings.Contains(out, "(retry after 30s)") {
		t.Errorf("test, 503: %q", out)
	}
	if n := len(rcv.take()); n != 3 {
		t.Errorf("%d deliveries of 3 refused tests", n)
	}
	rcv.status.Store(http.StatusOK)
	rcv.retryAfter.Store("")

	// Rotated: the next test is signed with the new secret.
	out, _ = run(0, "target", "update", "hook", "--webhook", rcv.url+"/hook", "--rotate-secret")
	rotated := secretOf(t, out)
	run(0, "target", "test", "hook")
	verify(t, rcv.take()[0], rotated)

	// A secret of our own, from a file, signs.
	own := newSecret(t)
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(own+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(0, "target", "create", "mine", "--webhook", rcv.url+"/mine", "--secret-file", file)
	run(0, "target", "test", "mine")
	dl = rcv.take()
	verify(t, dl[0], own)
	if dl[0].path != "/mine" {
		t.Errorf("delivered to %s", dl[0].path)
	}
}

// TestTargetInvalidInputAgainstTheDaemon: what schedctl refuses itself
// (exit 2) sends nothing; what only schedd can judge is refused by it
// with exit 2 too.
func TestTargetInvalidInputAgainstTheDaemon(t *testing.T) {
	d := clidaemon.New(t, clidaemon.Config{Start: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"target", "create", "x"}, "give --nats SUBJECT or --webhook URL"},
		{[]string{"target", "create", "x", "--nats", "a", "--webhook", "http://127.0.0.1/"}, "give --nats or --webhook, not both"},
		{[]string{"target", "create", "x", "--webhook", "http://127.0.0.1/", "--header", "Authorization: Bearer s3cr3t"}, `--header "Authorization...": want NAME=VALUE`},
		{[]string{"target", "create", "x", "--webhook", "http://127.0.0.1/", "--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
		{[]string{"target", "create", "x", "--webhook", "http://127.0.0.1/", "--rotate-secret"}, "unknown flag: --rotate-secret"},
		{[]string{"target", "create", "X", "--nats", "a"}, `target name: "X": use lowercase letters (x)`},
		{[]string{"target", "create"}, "accepts 1 arg"},
		{[]string{"target", "update", "x", "--rotate-secret"}, "give --nats SUBJECT or --webhook URL"},
		{[]string{"target", "get"}, "accepts 1 arg"},
		{[]string{"target", "frobnicate"}, `unknown command "frobnicate" for schedctl target`},
	} {
		before := d.Requests()
		code, _, errOut := d.Run(t, false, tc.args...)
		if code != cmdutil.ExitInvalid || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "s3cr3t") {
			t.Errorf("%v: exit %d %q, want %d and %q", tc.args, code, errOut, cmdutil.ExitInvalid, tc.want)
		}
		if n := d.Requests() - before; n != 0 {
			t.Errorf("%v: sent %d requests", tc.args, n)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		// The guard: a webhook may not reach a private address unless
		// schedd allows it (this one allows 127.0.0.0/8 only). Nothing is
		// sent to it: the address is checked as given.
		{[]string{"target", "create", "x", "--webhook", "http://10.0.0.1/hook"}, "target create x: invalid argument: "},
		{[]string{"target", "create", "x", "--webhook", "ftp://127.0.0.1/hook"}, "target create x: invalid argument: "},
		{[]string{"target", "create", "x", "--webhook", "http://127.0.0.1/", "--timeout", "1h"}, "timeout"},
	} {
		code, _, errOut := d.Run(t, false, tc.args...)
		if code != cmdutil.ExitInvalid || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want %d and %q", tc.args, code, errOut, cmdutil.ExitInvalid, tc.want)
		}
	}
}
