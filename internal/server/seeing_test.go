package server

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/jsonkeys"
	"github.com/sched-dev/sched/internal/testio"
)

// everySecond is a schedule firing every second on queue q.
func everySecond(name string) api.ScheduleRequest {
	return api.ScheduleRequest{Name: name, Queue: "q", Every: "1s", Payload: json.RawMessage(`{}`)}
}

func TestTriggerIdempotentByKey(t *testing.T) {
	h := newHarness(t)
	sc := h.create(everyMinute("nightly"))
	var first, again api.TriggerResult
	h.ok(http.StatusCreated, &first, "POST", "/v1/schedules/nightly/trigger", api.TriggerRequest{IdempotencyKey: "deploy-42"})
	h.clk.Advance(3 * time.Second)
	h.ok(http.StatusOK, &again, "POST", "/v1/schedules/nightly/trigger", nil, "Idempotency-Key", "deploy-42")
	if !first.Created || again.Created || first.Occurrence.OccurrenceID != again.Occurrence.OccurrenceID {
		t.Fatalf("trigger twice with one key: %+v then %+v; want one occurrence, created once", first, again)
	}
	o := first.Occurrence
	if !o.Manual || o.State != "ENQUEUED" || o.Lane != "strict" || !o.Due || !o.ScheduledFor.Equal(start) {
		t.Fatalf("manual occurrence %+v", o)
	}
	// Without a key every trigger is its own occurrence.
	var a, b api.TriggerResult
	h.ok(http.StatusCreated, &a, "POST", "/v1/schedules/nightly/trigger", nil)
	h.ok(http.StatusCreated, &b, "POST", "/v1/schedules/nightly/trigger", nil)
	if a.Occurrence.OccurrenceID == b.Occurrence.OccurrenceID {
		t.Fatalf("two triggers without a key share id %s", a.Occurrence.OccurrenceID)
	}
	var l api.OccurrenceList
	h.ok(200, &l, "GET", "/v1/occurrences?schedule=nightly", nil)
	manual := 0
	for _, o := range l.Occurrences {
		if o.Manual {
			manual++
		}
	}
	if manual != 3 {
		t.Fatalf("%d manual occurrences, want 3: %+v", manual, l.Occurrences)
	}
	// It is a real occurrence: a worker gets it.
	var cr api.ClaimResult
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: 10})
	if len(cr.Claimed) != 3 {
		t.Fatalf("claimed %d, want the 3 manual occurrences", len(cr.Claimed))
	}
	h.fails(404, api.CodeNotFound, "", "POST", "/v1/schedules/nope/trigger", nil)
	h.ok(200, nil, "POST", "/v1/schedules/nightly/cancel", nil)
	h.fails(409, api.CodeConflict, "", "POST", "/v1/schedules/"+sc.ScheduleID+"/trigger", nil)
}

// TestOccurrencePagingWhileAdding pages through a schedule's occurrences,
// both ways, while the planner adds more between pages: every occurrence
// that existed when paging began comes back exactly once, and none twice.
func TestOccurrencePagingWhileAdding(t *testing.T) {
	for _, order := range []string{"asc", "desc"} {
		t.Run(order, func(t *testing.T) {
			h := newHarness(t)
			h.create(everySecond("tick"))
			h.plan(0) // a minute of firings, the horizon
			var all api.OccurrenceList
			h.ok(200, &all, "GET", "/v1/occurrences?schedule=tick&limit=1000", nil)
			before := map[string]bool{}
			for _, o := range all.Occurrences {
				before[o.OccurrenceID] = true
			}
			if len(before) < 50 {
				t.Fatalf("%d occurrences to page through; want a minute's", len(before))
			}
			seen := map[string]int{}
			var got []api.Occurrence
			page := ""
			for pages := 0; pages < 100; pages++ {
				var l api.OccurrenceList
				h.ok(200, &l, "GET", "/v1/occurrences?schedule=tick&limit=7&order="+order+"&page="+page, nil)
				for _, o := range l.Occurrences {
					seen[o.OccurrenceID]++
					got = append(got, o)
				}
				h.plan(2 * time.Second) // more rows arrive while we page
				if l.NextPage == "" {
					break
				}
				page = l.NextPage
			}
			for id := range before {
				if seen[id] != 1 {
					t.Errorf("%s seen %d times, want once", id, seen[id])
				}
			}
			for id, n := range seen {
				if n > 1 {
					t.Errorf("%s seen %d times", id, n)
				}
			}
			sorted := slices.IsSortedFunc(got, func(a, b api.Occurrence) int {
				c := a.ScheduledFor.Compare(b.ScheduledFor)
				if c == 0 {
					c = strings.Compare(a.OccurrenceID, b.OccurrenceID)
				}
				if order == "desc" {
					c = -c
				}
				return c
			})
			if !sorted {
				t.Errorf("pages are not in %s order", order)
			}
		})
	}
}

func TestPageTokenChecked(t *testing.T) {
	h := newHarness(t)
	h.create(everySecond("tick"))
	h.plan(0)
	var l api.OccurrenceList
	h.ok(200, &l, "GET", "/v1/occurrences?limit=2", nil)
	if l.NextPage == "" {
		t.Fatal("no next_page on a full page")
	}
	h.fails(400, api.CodeInvalidArgument, "page", "GET", "/v1/occurrences?limit=2&order=desc&page="+l.NextPage, nil)
	h.fails(400, api.CodeInvalidArgument, "page", "GET", "/v1/dlq?page="+l.NextPage, nil)
	h.fails(400, api.CodeInvalidArgument, "page", "GET", "/v1/occurrences?page=not-a-token", nil)
	h.fails(400, api.CodeInvalidArgument, "order", "GET", "/v1/occurrences?order=newest", nil)
}

// deadOne makes one occurrence of schedule name DEAD by a permanent nack
// and returns its id.
func (h *harness) deadOne(name, msg string) string {
	h.t.Helper()
	var cr api.ClaimResult
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	if len(cr.Claimed) != 1 {
		h.t.Fatalf("claimed %d, want 1", len(cr.Claimed))
	}
	c := cr.Claimed[0]
	h.ok(200, nil, "POST", "/v1/occurrences/"+c.OccurrenceID+"/nack", api.NackRequest{Attempt: c.Attempt, Class: "permanent", Error: msg})
	return c.OccurrenceID
}

func TestDLQReasonsBulkReplayAndPurge(t *testing.T) {
	h := newHarness(t)
	h.create(everyMinute("a"))
	h.plan(0)
	h.plan(time.Minute)
	id := h.deadOne("a", "payload rejected: schema v3")
	var dlq api.OccurrenceList
	h.ok(200, &dlq, "GET", "/v1/dlq?schedule=a", nil)
	if len(dlq.Occurrences) != 1 {
		t.Fatalf("dlq %+v", dlq)
	}
	d := dlq.Occurrences[0]
	if d.OccurrenceID != id || d.DeadReason != "permanent_failure" || d.LastError != "payload rejected: schema v3" || d.FinishedAt == nil {
		t.Fatalf("dlq entry %+v: want its reason, last error and when", d)
	}
	h.ok(200, &dlq, "GET", "/v1/dlq?queue=other", nil)
	if len(dlq.Occurrences) != 0 {
		t.Fatalf("dlq of another queue: %+v", dlq)
	}

	var res api.DLQResult
	h.ok(200, &res, "POST", "/v1/dlq/replay", api.DLQFilter{Schedule: "a"})
	if res.Count != 1 || len(res.OccurrenceIDs) != 1 || res.OccurrenceIDs[0] != id {
		t.Fatalf("bulk replay: %+v", res)
	}
	h.ok(200, &res, "POST", "/v1/dlq/replay", api.DLQFilter{Schedule: "a"})
	if res.Count != 0 {
		t.Fatalf("bulk replay again: %+v, want nothing left to replay", res)
	}
	var o api.Occurrence
	h.ok(200, &o, "GET", "/v1/occurrences/"+id, nil)
	if o.State != "ENQUEUED" || o.DeadReason != "" {
		t.Fatalf("replayed: %+v", o)
	}

	h.clk.Advance(time.Millisecond) // put back where the lane was last claimed: claimable 1 ms later
	if again := h.deadOne("a", "still bad"); again != id {
		t.Fatalf("the replayed occurrence came back as %s, want %s", again, id)
	}
	h.ok(200, &res, "POST", "/v1/dlq/purge", api.DLQFilter{Queue: "q"})
	if res.Count != 1 {
		t.Fatalf("purge: %+v", res)
	}
	h.ok(200, &o, "GET", "/v1/occurrences/"+id, nil)
	if o.State != "CANCELED" || o.DeadReason != "permanent_failure" {
		t.Fatalf("purged: %+v; want CANCELED with its reason kept", o)
	}
	h.fails(409, api.CodeConflict, "", "POST", "/v1/occurrences/"+id+"/replay", nil)
	h.fails(404, api.CodeNotFound, "", "POST", "/v1/dlq/purge", api.DLQFilter{Schedule: "nope"})
}

func TestOccurrenceLagFields(t *testing.T) {
	h := newHarness(t)
	h.create(everyMinute("m"))
	h.plan(0) // materializes the firing at start+1m, 1m ahead
	var l api.OccurrenceList
	h.ok(200, &l, "GET", "/v1/occurrences?schedule=m", nil)
	if len(l.Occurrences) == 0 {
		t.Fatal("no occurrence")
	}
	o := l.Occurrences[0]
	if o.Due || o.Waiting != nil || o.ScheduleLag == nil || !strings.HasPrefix(*o.ScheduleLag, "-") {
		t.Fatalf("not yet due: %+v", o)
	}
	h.clk.Advance(time.Minute + 5*time.Second)
	h.ok(200, &l, "GET", "/v1/occurrences?schedule=m", nil)
	o = l.Occurrences[0]
	if !o.Due || o.Waiting == nil || *o.Waiting != "5s" || o.DeliveryLag != nil {
		t.Fatalf("due, unclaimed for 5s: %+v", o)
	}
	var cr api.ClaimResult
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w"})
	h.ok(200, &o, "GET", "/v1/occurrences/"+o.OccurrenceID, nil)
	if o.DeliveryLag == nil || *o.DeliveryLag != "5s" || o.ClaimLag == nil || *o.ClaimLag != "5s" || o.Waiting != nil {
		t.Fatalf("claimed 5s late: %+v", o)
	}
	// get never contradicts its own preview: the next firing not yet
	// delivered comes first in both.
	var sc api.Schedule
	h.ok(200, &sc, "GET", "/v1/schedules/m", nil)
	if sc.NextFireAt == nil || len(sc.Preview) == 0 || !sc.Preview[0].ScheduledFor.Equal(*sc.NextFireAt) {
		t.Fatalf("next_fire_at %v, preview %+v", sc.NextFireAt, sc.Preview)
	}
	if sc.NextRunAt == nil || sc.NextRunAt.Before(*sc.NextFireAt) {
		t.Fatalf("next_run_at (cursor) %v before next_fire_at %v", sc.NextRunAt, sc.NextFireAt)
	}
}

// TestMetricsEndpoint scrapes /metrics as Prometheus would: behind the
// token, in the text format its own parser reads, with every series
// documented.
func TestMetricsEndpoint(t *testing.T) {
	h := newHarness(t, withToken("s3cret"))
	h.create(everySecond("tick"))
	h.plan(0)
	h.clk.Advance(2 * time.Second)
	var cr api.ClaimResult
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: 2})
	for _, c := range cr.Claimed {
		h.ok(200, nil, "POST", "/v1/occurrences/"+c.OccurrenceID+"/ack", api.AckRequest{Attempt: c.Attempt})
		// An ack sent again (its answer lost) is taken again, and counted
		// once.
		h.ok(200, nil, "POST", "/v1/occurrences/"+c.OccurrenceID+"/ack", api.AckRequest{Attempt: c.Attempt})
	}
	h.fails(409, api.CodeStaleAttempt, "", "POST", "/v1/occurrences/"+cr.Claimed[0].OccurrenceID+"/ack", api.AckRequest{Attempt: 7})
	h.token = ""
	h.fails(401, api.CodeUnauthorized, "", "GET", "/metrics", nil)
	h.token = "s3cret"
	code, raw := h.do("GET", "/metrics", nil)
	if code != 200 {
		t.Fatalf("GET /metrics: %d %s", code, raw)
	}
	fams := parseMetrics(t, raw)
	for _, name := range []string{
		"sched_schedule_lag_seconds", "sched_delivery_lag_seconds", "sched_occurrences_materialized_total",
		"sched_claims_total", "sched_acks_total", "sched_occurrences", "sched_oldest_ready_seconds",
		"sched_due_backlog", "sched_dlq_size", "sched_shards_held", "sched_shard_epoch", "sched_planner_pass_seconds",
		"sched_clock_offset_seconds", "sched_http_requests_total", "sched_http_request_duration_seconds",
	} {
		f, ok := fams[name]
		if !ok {
			t.Errorf("no series %s", name)
			continue
		}
		if f.GetHelp() == "" {
			t.Errorf("%s has no help text", name)
		}
	}
	if got := counterSum(fams["sched_acks_total"]); got != 2 {
		t.Errorf("sched_acks_total %v, want 2", got)
	}
	if got := counterSum(fams["sched_stale_attempts_total"]); got != 1 {
		t.Errorf("sched_stale_attempts_total %v, want 1", got)
	}
	// The lanes of the default tenant are there from the start, at 0: the
	// samples are the sum over the series.
	var samples uint64
	for _, m := range fams["sched_delivery_lag_seconds"].GetMetric() {
		samples += m.GetHistogram().GetSampleCount()
	}
	if samples != 2 {
		t.Errorf("delivery lag samples: %d, want 2: %v", samples, fams["sched_delivery_lag_seconds"])
	}
}

func parseMetrics(t *testing.T, raw []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

func counterSum(f *dto.MetricFamily) float64 {
	if f == nil {
		return -1
	}
	var n float64
	for _, m := range f.Metric {
		n += m.GetCounter().GetValue()
	}
	return n
}

// TestStatusFields pins the names of GET /v1/status's JSON fields, which
// scripts read (testdata/status_fields.golden; -update rewrites it).
func TestStatusFields(t *testing.T) {
	h := newHarness(t)
	h.create(everySecond("tick"))
	h.plan(0)
	h.clk.Advance(3 * time.Second)
	var cr api.ClaimResult
	h.ok(200, &cr, "POST", "/v1/claims", api.ClaimRequest{Queue: "q", WorkerID: "w", Limit: 2})
	code, raw := h.do("GET", "/v1/status", nil)
	if code != 200 {
		t.Fatalf("status: %d %s", code, raw)
	}
	keys, err := jsonkeys.Paths(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(keys, "\n") + "\n"
	golden := filepath.Join("testdata", "status_fields.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("status fields changed (scripts read them); got\n%s\nwant\n%s", got, want)
	}
	var st api.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if st.DeliveryLag.LastMinute.Count != 2 || st.DeliveryLag.LastMinute.P99 == nil || len(st.DueBacklog) != 60 {
		t.Errorf("status: delivery lag %+v, %d backlog minutes", st.DeliveryLag.LastMinute, len(st.DueBacklog))
	}
	if st.LastHour.Claims != 2 || st.LastHour.Materialized == 0 || len(st.Nodes) != 1 || st.Nodes[0].LastPass == nil {
		t.Errorf("status: last hour %+v, nodes %+v", st.LastHour, st.Nodes)
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// TestAbandonedLongPollIsNot5xx: a worker that gives up a long poll is
// counted as 499 by route, not as a server error, and its request log line
// says 499 too, so that alerts on the log and on the metrics agree.
func TestAbandonedLongPollIsNot5xx(t *testing.T) {
	var logs testio.SyncBuffer
	h := newHarness(t, withLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx, cancel := context.WithCancel(t.Context())
	body, _ := json.Marshal(api.ClaimRequest{Queue: "idle", WorkerID: "w", Wait: "1m"})
	req, err := http.NewRequestWithContext(ctx, "POST", h.ts.URL+"/v1/claims", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// The claim is waiting once the engine's clock has a timer for it.
	giveUp := time.Now().Add(20 * time.Second) // a bound on a broken test, not a measure of speed
	for h.clk.Pending() == 0 {
		if time.Now().After(giveUp) {
			t.Fatal("the claim never waited")
		}
		runtime.Gosched()
	}
	cancel()
	<-done
	var fams map[string]*dto.MetricFamily
	logged := regexp.MustCompile(`msg=request route="POST /v1/claims" status=(\d+)`)
	for {
		_, raw := h.do("GET", "/metrics", nil)
		fams = parseMetrics(t, raw)
		if requests(fams, "POST /v1/claims", "499") == 1 && logged.MatchString(logs.String()) {
			break
		}
		if time.Now().After(giveUp) {
			t.Fatalf("no 499 for the abandoned claim: %v\nlog:\n%s", fams["sched_http_requests_total"], logs.String())
		}
		runtime.Gosched()
	}
	if m := logged.FindAllStringSubmatch(logs.String(), -1); len(m) != 1 || m[0][1] != "499" {
		t.Errorf("the abandoned claim's log lines: %q, want one with status=499", m)
	}
	for _, code := range []string{"500", "503", "504"} {
		if n := requests(fams, "POST /v1/claims", code); n != 0 {
			t.Errorf("abandoned long poll counted as %s (%v)", code, n)
		}
	}
}

// requests is sched_http_requests_total for route and code.
func requests(fams map[string]*dto.MetricFamily, route, code string) float64 {
	var n float64
	for _, m := range fams["sched_http_requests_total"].GetMetric() {
		var r, c string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "route":
				r = l.GetValue()
			case "code":
				c = l.GetValue()
			}
		}
		if r == route && c == code {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// TestDueBacklogByClockMinute: a status taken part way through a minute
// still counts a firing at 10:05:00 in the minute labelled 10:05.
func TestDueBacklogByClockMinute(t *testing.T) {
	h := newHarness(t)
	h.clk.Advance(30 * time.Second) // 10:00:30
	h.create(api.ScheduleRequest{Name: "once", Queue: "q", At: "2027-01-04T10:05:00Z"})
	var st api.Status
	h.ok(200, &st, "GET", "/v1/status", nil)
	for _, b := range st.DueBacklog {
		want := int64(0)
		if b.Minute.Equal(start.Add(5 * time.Minute)) {
			want = 1
		}
		if b.Due != want {
			t.Errorf("minute %s: %d due, want %d", b.Minute.Format("15:04:05"), b.Due, want)
		}
	}
	if len(st.DueBacklog) != 60 || !st.DueBacklog[0].Minute.Equal(start) {
		t.Fatalf("backlog starts at %v with %d minutes; want the current minute, 10:00, and 60", st.DueBacklog[0].Minute, len(st.DueBacklog))
	}
}
