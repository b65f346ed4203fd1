package client_test

// These tests run the client against an httptest server that answers with
// the documented JSON of docs/api.md. They check the client's side only:
// methods, paths, queries, headers, bodies, and how answers and errors are
// decoded. The daemon's behaviour is tested end to end against the real
// schedd elsewhere.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/testdaemon"
)

// seen is one request as the server got it.
type seen struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// recorder is an httptest server that records requests and answers each
// route with a canned status and body.
type recorder struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []seen
	answers map[string]answer // "METHOD /path" -> answer
}

type answer struct {
	status int
	body   any
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{answers: map[string]answer{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, seen{req.Method, req.URL.EscapedPath(), req.URL.RawQuery, req.Header.Clone(), string(b)})
	a, ok := r.answers[req.Method+" "+req.URL.EscapedPath()]
	r.mu.Unlock()
	if !ok {
		a = answer{404, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeNotFound, Message: "no route " + req.URL.Path}}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	json.NewEncoder(w).Encode(a.body)
}

func (r *recorder) on(method, path string, status int, body any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[method+" "+path] = answer{status, body}
}

func (r *recorder) last(t *testing.T) seen {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("no request")
	}
	return r.reqs[len(r.reqs)-1]
}

func (r *recorder) addr() string { return "tcp:" + strings.TrimPrefix(r.srv.URL, "http://") }

func newClient(t *testing.T, r *recorder, token string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(r.addr(), token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var ctx = context.Background()

func TestRoutes(t *testing.T) {
	r := newRecorder(t)
	c := newClient(t, r, "tok-123", client.WithVersion("test/1.0"))
	sch := api.Schedule{ScheduleID: "sch_1", Name: "nightly", Version: 2, State: "ACTIVE"}
	occ := api.Occurrence{OccurrenceID: "occ_1", State: "SUCCEEDED"}
	change := api.ChangeResult{Schedule: sch, Canceled: 3, InFlight: 1}
	req := api.ScheduleRequest{Name: "nightly", Queue: "q", Cron: "0 2 * * *", TimeZone: "UTC", Payload: json.RawMessage(`{"a":1}`)}

	cases := []struct {
		name      string
		method    string
		path      string
		answer    any
		call      func() (any, error)
		wantQuery string
		wantBody  string
		want      any
	}{
		{"status", "GET", "/v1/status", api.Status{Version: "1", NodeID: "n1"},
			func() (any, error) { return c.Status(ctx) }, "", "", &api.Status{Version: "1", NodeID: "n1"}},
		{"create", "POST", "/v1/schedules", api.CreateResult{Schedule: sch, Created: true},
			func() (any, error) { return c.CreateSchedule(ctx, req) }, "",
			`{"name":"nightly","queue":"q","cron":"0 2 * * *","time_zone":"UTC","payload":{"a":1}}`,
			&api.CreateResult{Schedule: sch, Created: true}},
		{"list", "GET", "/v1/schedules", api.ScheduleList{Schedules: []api.Schedule{sch}, NextPage: "c2"},
			func() (any, error) {
				return c.ListSchedules(ctx, client.ListSchedulesOptions{State: "PAUSED", Page: "c1", Limit: 50})
			}, "limit=50&page=c1&state=PAUSED", "", &api.ScheduleList{Schedules: []api.Schedule{sch}, NextPage: "c2"}},
		{"get by name with a slash", "GET", "/v1/schedules/team%2Fnightly", sch,
			func() (any, error) { return c.GetSchedule(ctx, "team/nightly") }, "", "", &sch},
		{"update", "PUT", "/v1/schedules/sch_1", change,
			func() (any, error) { return c.UpdateSchedule(ctx, "sch_1", req) }, "",
			`{"name":"nightly","queue":"q","cron":"0 2 * * *","time_zone":"UTC","payload":{"a":1}}`, &change},
		{"pause", "POST", "/v1/schedules/sch_1/pause", change,
			func() (any, error) { return c.PauseSchedule(ctx, "sch_1") }, "", "", &change},
		{"resume", "POST", "/v1/schedules/sch_1/resume", change,
			func() (any, error) { return c.ResumeSchedule(ctx, "sch_1") }, "", "", &change},
		{"cancel", "POST", "/v1/schedules/sch_1/cancel", change,
			func() (any, error) { return c.CancelSchedule(ctx, "sch_1") }, "", "", &change},
		{"occurrences", "GET", "/v1/occurrences", api.OccurrenceList{Occurrences: []api.Occurrence{occ}},
			func() (any, error) {
				return c.ListOccurrences(ctx, client.ListOccurrencesOptions{Schedule: "nightly", State: "DEAD", Queue: "q", Limit: 5})
			}, "limit=5&queue=q&schedule=nightly&state=DEAD", "", &api.OccurrenceList{Occurrences: []api.Occurrence{occ}}},
		{"occurrences page newest first", "GET", "/v1/occurrences", api.OccurrenceList{Occurrences: []api.Occurrence{occ}, NextPage: "p3"},
			func() (any, error) {
				return c.ListOccurrences(ctx, client.ListOccurrencesOptions{Schedule: "nightly", Page: "p2", Reverse: true})
			}, "order=desc&page=p2&schedule=nightly", "", &api.OccurrenceList{Occurrences: []api.Occurrence{occ}, NextPage: "p3"}},
		{"occurrence", "GET", "/v1/occurrences/occ_1", occ,
			func() (any, error) { return c.GetOccurrence(ctx, "occ_1") }, "", "", &occ},
		{"attempts", "GET", "/v1/occurrences/occ_1/attempts", map[string]any{"attempts": []api.Attempt{{Attempt: 1, WorkerID: "w"}}},
			func() (any, error) { return c.ListAttempts(ctx, "occ_1", client.ListAttemptsOptions{}) }, "", "",
			&api.AttemptList{Attempts: []api.Attempt{{Attempt: 1, WorkerID: "w"}}}},
		{"attempts page", "GET", "/v1/occurrences/occ_1/attempts", api.AttemptList{Attempts: []api.Attempt{{Attempt: 3}}, NextPage: "a4"},
			func() (any, error) {
				return c.ListAttempts(ctx, "occ_1", client.ListAttemptsOptions{Limit: 2, Page: "a2"})
			}, "limit=2&page=a2", "", &api.AttemptList{Attempts: []api.Attempt{{Attempt: 3}}, NextPage: "a4"}},
		{"trigger", "POST", "/v1/schedules/team%2Fnightly/trigger", api.TriggerResult{Occurrence: occ, Created: true},
			func() (any, error) { return c.Trigger(ctx, "team/nightly", api.TriggerRequest{}) }, "", "{}",
			&api.TriggerResult{Occurrence: occ, Created: true}},
		{"trigger with a key", "POST", "/v1/schedules/sch_1/trigger", api.TriggerResult{Occurrence: occ},
			func() (any, error) { return c.Trigger(ctx, "sch_1", api.TriggerRequest{IdempotencyKey: "k-9"}) }, "",
			`{"idempotency_key":"k-9"}`, &api.TriggerResult{Occurrence: occ}},
		{"claim", "POST", "/v1/claims", api.ClaimResult{Claimed: []api.Claimed{{OccurrenceID: "occ_1", Attempt: 3}}},
			func() (any, error) {
				return c.Claim(ctx, api.ClaimRequest{Queue: "q", WorkerID: "w1", Limit: 2, Lease: "30s", Wait: "1s"})
			}, "", `{"queue":"q","worker_id":"w1","limit":2,"lease":"30s","wait":"1s"}`,
			&api.ClaimResult{Claimed: []api.Claimed{{OccurrenceID: "occ_1", Attempt: 3}}}},
		{"heartbeat", "POST", "/v1/occurrences/occ_1/heartbeat", api.HeartbeatResult{Superseded: true},
			func() (any, error) { return c.Heartbeat(ctx, "occ_1", api.HeartbeatRequest{Attempt: 3, Lease: "10s"}) },
			"", `{"attempt":3,"lease":"10s"}`, &api.HeartbeatResult{Superseded: true}},
		{"ack", "POST", "/v1/occurrences/occ_1/ack", occ,
			func() (any, error) { return c.Ack(ctx, "occ_1", api.AckRequest{Attempt: 3}) }, "", `{"attempt":3}`, &occ},
		{"nack", "POST", "/v1/occurrences/occ_1/nack", occ,
			func() (any, error) {
				return c.Nack(ctx, "occ_1", api.NackRequest{Attempt: 3, Class: client.ClassPermanent, Error: "boom"})
			}, "", `{"attempt":3,"class":"permanent","error":"boom"}`, &occ},
		{"replay", "POST", "/v1/occurrences/occ_1/replay", occ,
			func() (any, error) { return c.Replay(ctx, "occ_1") }, "", "", &occ},
		{"dlq", "GET", "/v1/dlq", api.OccurrenceList{Occurrences: []api.Occurrence{occ}},
			func() (any, error) { return c.ListDLQ(ctx, client.ListDLQOptions{Queue: "q", Limit: 7}) },
			"limit=7&queue=q", "", &api.OccurrenceList{Occurrences: []api.Occurrence{occ}}},
		{"dlq page newest first", "GET", "/v1/dlq", api.OccurrenceList{Occurrences: []api.Occurrence{occ}, NextPage: "d2"},
			func() (any, error) {
				return c.ListDLQ(ctx, client.ListDLQOptions{Schedule: "nightly", Page: "d1", Reverse: true})
			}, "order=desc&page=d1&schedule=nightly", "", &api.OccurrenceList{Occurrences: []api.Occurrence{occ}, NextPage: "d2"}},
		{"dlq replay", "POST", "/v1/dlq/replay", api.DLQResult{Count: 2, OccurrenceIDs: []string{"occ_1", "occ_2"}},
			func() (any, error) { return c.ReplayDLQ(ctx, api.DLQFilter{Schedule: "nightly", Queue: "q"}) }, "",
			`{"schedule":"nightly","queue":"q"}`, &api.DLQResult{Count: 2, OccurrenceIDs: []string{"occ_1", "occ_2"}}},
		{"dlq purge", "POST", "/v1/dlq/purge", api.DLQResult{Count: 5},
			func() (any, error) { return c.PurgeDLQ(ctx, api.DLQFilter{}) }, "", "{}", &api.DLQResult{Count: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.on(tc.method, tc.path, 200, tc.answer)
			got, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			s := r.last(t)
			if s.Method != tc.method || s.Path != tc.path || s.Query != tc.wantQuery {
				t.Errorf("sent %s %s?%s, want %s %s?%s", s.Method, s.Path, s.Query, tc.method, tc.path, tc.wantQuery)
			}
			if strings.TrimSpace(s.Body) != tc.wantBody {
				t.Errorf("body %s, want %s", s.Body, tc.wantBody)
			}
			if tc.wantBody != "" && s.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", s.Header.Get("Content-Type"))
			}
			if s.Header.Get("Authorization") != "Bearer tok-123" {
				t.Errorf("Authorization %q", s.Header.Get("Authorization"))
			}
			if s.Header.Get(client.HeaderVersion) != "test/1.0" {
				t.Errorf("Sched-Version %q", s.Header.Get(client.HeaderVersion))
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) {
				t.Errorf("decoded %s, want %s", gj, wj)
			}
		})
	}
}

func TestHealthAndReady(t *testing.T) {
	r := newRecorder(t)
	c := newClient(t, r, "")
	r.on("GET", "/healthz", 200, map[string]string{"status": "ok"})
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if h := r.last(t).Header.Get("Authorization"); h != "" {
		t.Errorf("no token given, but Authorization %q sent", h)
	}
	r.on("GET", "/readyz", 503, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnavailable, Message: "shutting down"}})
	if err := c.Ready(ctx); !client.IsUnavailable(err) {
		t.Fatalf("Ready: %v, want unavailable", err)
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	r := newRecorder(t)
	c := newClient(t, r, "")
	r.on("POST", "/v1/schedules", 200, api.CreateResult{Created: false})
	res, err := c.CreateSchedule(ctx, api.ScheduleRequest{Name: "n", Queue: "q", Every: "1h", IdempotencyKey: "k-1"})
	if err != nil || res.Created {
		t.Fatalf("%+v %v", res, err)
	}
	if got := r.last(t).Header.Get("Idempotency-Key"); got != "k-1" {
		t.Errorf("Idempotency-Key %q", got)
	}
}

// TestTriggerIdempotencyKeyHeader: a trigger's key also goes as the
// Idempotency-Key header, as a create's does.
func TestTriggerIdempotencyKeyHeader(t *testing.T) {
	r := newRecorder(t)
	c := newClient(t, r, "")
	r.on("POST", "/v1/schedules/n/trigger", 200, api.TriggerResult{Created: false})
	if _, err := c.Trigger(ctx, "n", api.TriggerRequest{IdempotencyKey: "k-2"}); err != nil {
		t.Fatal(err)
	}
	if got := r.last(t).Header.Get("Idempotency-Key"); got != "k-2" {
		t.Errorf("Idempotency-Key %q", got)
	}
	r.on("POST", "/v1/schedules/n/trigger", 201, api.TriggerResult{Created: true})
	if _, err := c.Trigger(ctx, "n", api.TriggerRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := r.last(t).Header.Get("Idempotency-Key"); got != "" {
		t.Errorf("no key given, but Idempotency-Key %q sent", got)
	}
}

// TestMetricsText: /metrics answers the Prometheus text format, read as
// text with the token sent; its errors are the client's typed errors.
func TestMetricsText(t *testing.T) {
	const page = "# HELP sched_acks_total Acks.\n# TYPE sched_acks_total counter\nsched_acks_total 7\n"
	dir := privateDir(t)
	sock := filepath.Join(dir, "m.sock")
	var status int
	var gotAuth, gotAccept string
	var mu sync.Mutex
	serveUnix(t, sock, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		gotAuth, gotAccept = r.Header.Get("Authorization"), r.Header.Get("Accept")
		if r.URL.Path != "/metrics" || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		switch status {
		case http.StatusUnauthorized:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnauthorized, Message: "missing token"}})
		case http.StatusBadGateway:
			w.WriteHeader(status)
			io.WriteString(w, "upstream gone")
		default:
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			io.WriteString(w, page)
		}
	}))
	c, err := client.New("unix:"+sock, "tok-m")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Metrics(ctx)
	if err != nil || got != page {
		t.Fatalf("Metrics: %q, %v", got, err)
	}
	if gotAuth != "Bearer tok-m" || !strings.HasPrefix(gotAccept, "text/plain") {
		t.Errorf("Authorization %q, Accept %q", gotAuth, gotAccept)
	}
	mu.Lock()
	status = http.StatusUnauthorized
	mu.Unlock()
	if _, err := c.Metrics(ctx); !client.IsUnauthorized(err) || !strings.Contains(err.Error(), "unauthorized: missing token") {
		t.Errorf("401: %v", err)
	}
	mu.Lock()
	status = http.StatusBadGateway
	mu.Unlock()
	_, err = c.Metrics(ctx)
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadGateway || !strings.Contains(err.Error(), "upstream gone") {
		t.Errorf("502: %T %v", err, err)
	}
}

func TestErrors(t *testing.T) {
	r := newRecorder(t)
	c := newClient(t, r, "")
	cases := []struct {
		name   string
		status int
		body   any
		check  func(error) bool
		want   string
	}{
		{"not found", 404, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeNotFound, Message: `schedule "x" not found`}},
			client.IsNotFound, `not found: schedule "x" not found`},
		{"stale attempt", 409, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeStaleAttempt, Message: "attempt 1 is not the current attempt 2"}},
			client.IsStaleAttempt, "stale attempt: attempt 1 is not the current attempt 2"},
		{"conflict", 409, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeConflict, Message: "name taken"}},
			client.IsConflict, "conflict: name taken"},
		{"invalid", 400, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeInvalidArgument, Message: "cron: bad", Field: "cron"}},
			client.IsInvalid, "invalid argument: cron: bad"},
		{"never fires", 400, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeCronNeverFires, Message: "never"}},
			client.IsInvalid, "cron never fires: never"},
		{"zone", 400, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeInvalidTimeZone, Message: "Mars"}},
			client.IsInvalid, "invalid time zone: Mars"},
		{"unauthorized", 401, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnauthorized, Message: "bad token"}},
			client.IsUnauthorized, "unauthorized: bad token"},
		{"busy", 503, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeStoreBusy, Message: "locked"}},
			client.IsUnavailable, "store busy: locked"},
		{"not JSON", 502, "<html>bad gateway</html>",
			func(err error) bool { return !client.IsNotFound(err) && !client.IsInvalid(err) }, "schedd answered HTTP 502 Bad Gateway"},
		{"bare 404", 404, "nope", client.IsNotFound, "schedd answered HTTP 404 Not Found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.on("GET", "/v1/schedules/x", tc.status, tc.body)
			_, err := c.GetSchedule(ctx, "x")
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not a *client.Error", err, err)
			}
			if e.Status != tc.status {
				t.Errorf("Status %d, want %d", e.Status, tc.status)
			}
			if !tc.check(err) {
				t.Errorf("predicate false for %v", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("message %q, want prefix %q", err.Error(), tc.want)
			}
			if tc.name == "invalid" && e.Field != "cron" {
				t.Errorf("Field %q", e.Field)
			}
		})
	}
	// Predicates see through wrapping.
	r.on("GET", "/v1/schedules/x", 404, api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeNotFound}})
	_, err := c.GetSchedule(ctx, "x")
	if !client.IsNotFound(errors.Join(errors.New("context"), err)) {
		t.Error("IsNotFound does not see a wrapped error")
	}
	if client.IsStaleAttempt(err) || client.IsConflict(err) || client.IsNotFound(nil) {
		t.Error("predicates too eager")
	}
}

func TestNew(t *testing.T) {
	for _, addr := range []string{"", "unix:/run/s.sock", "tcp:127.0.0.1:8080", "tcp:localhost:1", "tcp:[::1]:80", "https://sched.example:8443", "https://sched.example:8443/", "tls:sched.example:8443", "tls:[::1]:1"} {
		if _, err := client.New(addr, ""); err != nil {
			t.Errorf("New(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"unix:", "tcp:", "tcp:host", "tcp::80", "http://h:80", "https://h:1/path", "https://u:p@h:1", "/run/s.sock", "h:80", "https://h", "tls:", "tls:h"} {
		_, err := client.New(addr, "")
		if !errors.Is(err, client.ErrInvalidAddress) {
			t.Errorf("New(%q): %v, want ErrInvalidAddress", addr, err)
		}
	}
	if _, err := client.New("tcp:h:1", "a b"); err == nil {
		t.Error("token with a space accepted")
	}
	if _, err := client.New("tcp:h:1", "tok\r\nX-Evil: 1"); err == nil {
		t.Error("token with CRLF accepted")
	}
	c, _ := client.New("", "", client.WithEnv(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/7"})))
	if c.Addr() != "unix:/run/user/7/sched/schedd.sock" {
		t.Errorf("default address %q", c.Addr())
	}
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestLongPollOutlivesTimeout: a claim waiting 1.5s is not cut by a client
// timeout of 300ms.
func TestLongPollOutlivesTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(700 * time.Millisecond)
		json.NewEncoder(w).Encode(api.ClaimResult{Claimed: []api.Claimed{}})
	}))
	defer srv.Close()
	c, err := client.New("tcp:"+strings.TrimPrefix(srv.URL, "http://"), "", client.WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(ctx, api.ClaimRequest{Queue: "q", Wait: "1s"}); err != nil {
		t.Fatalf("long poll cut: %v", err)
	}
	// Without a wait, the timeout applies.
	_, err = c.Claim(ctx, api.ClaimRequest{Queue: "q"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("no wait: %v, want a deadline error", err)
	}
}

func TestAllSchedulesPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var l api.ScheduleList
		switch r.URL.Query().Get("page") {
		case "":
			l = api.ScheduleList{Schedules: []api.Schedule{{Name: "a"}, {Name: "b"}}, NextPage: "p2"}
		case "p2":
			l = api.ScheduleList{Schedules: []api.Schedule{{Name: "c"}}, NextPage: "p3"}
		case "p3":
			l = api.ScheduleList{Schedules: []api.Schedule{{Name: "d"}}}
		}
		if r.URL.Query().Get("state") != "ACTIVE" {
			w.WriteHeader(400)
		}
		json.NewEncoder(w).Encode(l)
	}))
	defer srv.Close()
	c, _ := client.New("tcp:"+strings.TrimPrefix(srv.URL, "http://"), "")
	all, err := c.AllSchedules(ctx, "ACTIVE")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "a,b,c,d" {
		t.Fatalf("got %v", names)
	}
}

func TestNoRedirectCarriesTheToken(t *testing.T) {
	var leaked bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("Authorization") != ""
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/status", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c, _ := client.New("tcp:"+strings.TrimPrefix(srv.URL, "http://"), "secret")
	if _, err := c.Status(ctx); err == nil {
		t.Fatal("a redirect was taken as an answer")
	}
	if leaked {
		t.Fatal("the token followed a redirect")
	}
}

// serveUnix serves h on a Unix socket at path.
func serveUnix(t *testing.T, path string, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

func statusHandler(gotToken *string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gotToken != nil {
			*gotToken = r.Header.Get("Authorization")
		}
		json.NewEncoder(w).Encode(api.Status{NodeID: "unix"})
	})
}

func privateDir(t *testing.T) string {
	// Short: socket paths are limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestUnixSocket(t *testing.T) {
	dir := privateDir(t)
	sock := filepath.Join(dir, "s.sock")
	var tok string
	serveUnix(t, sock, statusHandler(&tok))
	c, err := client.New("unix:"+sock, "tok")
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx)
	if err != nil || st.NodeID != "unix" || tok != "Bearer tok" {
		t.Fatalf("status %+v, %v, token %q", st, err, tok)
	}
}

func TestDefaultSocketSaysHowToStart(t *testing.T) {
	dir := privateDir(t)
	c, _ := client.New("", "", client.WithEnv(env(map[string]string{"XDG_RUNTIME_DIR": dir})))
	_, err := c.Status(ctx)
	var de *client.DialError
	if !errors.As(err, &de) || de.Untrusted {
		t.Fatalf("error %T %v, want a DialError", err, err)
	}
	for _, want := range []string{"cannot connect to schedd at unix:" + dir, "is schedd running? start it with: schedd"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// A stale socket file with nobody listening says the same.
	if err := os.MkdirAll(filepath.Join(dir, "sched"), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sched", "schedd.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := c.Status(ctx); err == nil || !strings.Contains(err.Error(), "start it with: schedd") {
		t.Errorf("stale socket: %v", err)
	}
}

// TestUnixSocketRefusesImpostors: a client never hands its token to an
// impostor at the socket's path. A symlink, a file that is not a socket, and a socket owned by another user are refused before
// anything is sent.
func TestUnixSocketRefusesImpostors(t *testing.T) {
	dir := privateDir(t)
	real := filepath.Join(dir, "real.sock")
	var tok string
	serveUnix(t, real, statusHandler(&tok))

	link := filepath.Join(dir, "link.sock")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file.sock")
	os.WriteFile(file, nil, 0o600)
	for _, p := range []string{link, file} {
		c, _ := client.New("unix:"+p, "secret")
		_, err := c.Status(ctx)
		var de *client.DialError
		if !errors.As(err, &de) || !de.Untrusted || !strings.Contains(err.Error(), "refusing to talk to") {
			t.Errorf("%s: %v, want an untrusted DialError", filepath.Base(p), err)
		}
	}
	if tok != "" {
		t.Fatalf("the token reached the server: %q", tok)
	}
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	if err := os.Lchown(real, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	c, _ := client.New("unix:"+real, "secret")
	_, err := c.Status(ctx)
	if err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("socket of another user: %v", err)
	}
	if tok != "" {
		t.Fatalf("the token reached the server: %q", tok)
	}
}

// TestPeerCredentials: a socket file this user owns, but served by a
// process of another user (the file was swapped after the owner check, or
// chowned), is refused after connecting and before sending, from the
// peer credentials the kernel recorded.
func TestPeerCredentials(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a server as another user needs root")
	}
	dir := privateDir(t)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// Copy the test binary where uid 65534 can run it.
	self, _ := os.Executable()
	bin := filepath.Join(dir, "helper")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	cmd := exec.Command(bin, "-test.run=^TestHelperServer$")
	cmd.Env = append(os.Environ(), "SCHED_TEST_HELPER_SOCKET="+sock)
	cmd.SysProcAttr = nobody()
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run a helper as another user: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	// The socket file appears at bind, a moment before the helper listens
	// on it: wait until it accepts (as root, before the chown below).
	testdaemon.WaitServing(t, testdaemon.Proc{Name: "the helper server", Done: done, Code: func() int { return cmd.ProcessState.ExitCode() }},
		10*time.Second, func() error {
			conn, err := net.Dial("unix", sock)
			if err == nil {
				conn.Close()
			}
			return err
		})
	if err := os.Lchown(sock, 0, 0); err != nil { // the owner check now passes
		t.Fatal(err)
	}
	c, _ := client.New("unix:"+sock, "secret")
	_, err = c.Status(ctx)
	if err == nil || !strings.Contains(err.Error(), "the server runs as uid 65534, not as you (uid 0)") {
		t.Fatalf("got %v", err)
	}
}

// TestHelperServer is the other user's server of TestPeerCredentials.
func TestHelperServer(t *testing.T) {
	sock := os.Getenv("SCHED_TEST_HELPER_SOCKET")
	if sock == "" {
		t.Skip("helper process only")
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		os.Exit(3) // a request reached the impostor
	}))
}
