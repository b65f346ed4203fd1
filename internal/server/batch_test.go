package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

// batch posts items to the bulk create, requires 200 and returns the
// answer, its counts checked against its items.
func (h *harness) batch(body any, hdr ...string) api.BatchResult {
	h.t.Helper()
	var res api.BatchResult
	h.ok(http.StatusOK, &res, "POST", "/v1/schedules:batch", body, hdr...)
	counts := map[string]int{}
	for i, it := range res.Items {
		if it.Index != i {
			h.t.Fatalf("item %d answered as index %d", i, it.Index)
		}
		if (it.Status == api.BatchError) != (it.Error != nil) || (it.Status == api.BatchError) == (it.Schedule != nil) {
			h.t.Fatalf("item %d: status %s with schedule %v and error %v", i, it.Status, it.Schedule, it.Error)
		}
		counts[it.Status]++
	}
	if res.Created != counts[api.BatchCreated] || res.Existing != counts[api.BatchExists] || res.Failed != counts[api.BatchError] {
		h.t.Fatalf("counts %d/%d/%d do not match the items %v", res.Created, res.Existing, res.Failed, counts)
	}
	return res
}

// want is what an item of a batch should come to: its status, and for an
// error its code and field.
type want struct {
	status, code, field string
}

func checkItems(t *testing.T, res api.BatchResult, wants []want) {
	t.Helper()
	if len(res.Items) != len(wants) {
		t.Fatalf("%d items answered, want %d", len(res.Items), len(wants))
	}
	for i, w := range wants {
		it := res.Items[i]
		if it.Status != w.status {
			t.Errorf("item %d: %s (%+v), want %s", i, it.Status, it.Error, w.status)
			continue
		}
		if w.status != api.BatchError {
			continue
		}
		if it.Error.Code != w.code || it.Error.Field != w.field || !strings.Contains(it.Error.Message, fmt.Sprintf("item %d", i)) {
			t.Errorf("item %d: error %+v, want code %s field %q and a message naming the item", i, *it.Error, w.code, w.field)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// TestBatchCreateMixed: good, invalid, malformed and duplicate items in
// one batch each get their own answer, with the codes a single create
// gives; the good ones are stored, and a replay of the whole batch
// creates nothing more.
func TestBatchCreateMixed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(everyMinute("taken"))
	items := []any{
		api.BatchItem{IdempotencyKey: "k-0", Schedule: everyMinute("a")},                                                                 // 0 created
		api.BatchItem{Schedule: api.ScheduleRequest{Name: "b", Queue: "q", Cron: "61 * * * *", TimeZone: "UTC"}},                         // 1 bad cron
		api.BatchItem{Schedule: api.ScheduleRequest{Name: "c", Queue: "q", Every: "1m", TimeZone: "Mars/Olympus"}},                       // 2 bad zone
		json.RawMessage(`{"schedule":{"name":"d","queue":"q","every":5}}`),                                                               // 3 wrong type
		json.RawMessage(`{"schedule":{"name":"e","queue":"q","every":"1m"},"colour":"red"}`),                                             // 4 unknown field
		api.BatchItem{Schedule: everyMinute("taken")},                                                                                    // 5 name taken before
		api.BatchItem{Schedule: everyMinute("a")},                                                                                        // 6 name taken by item 0
		api.BatchItem{IdempotencyKey: "k-0", Schedule: everyMinute("a")},                                                                 // 7 same key, same body: item 0's
		api.BatchItem{IdempotencyKey: "k-0", Schedule: everyMinute("other")},                                                             // 8 same key, other body
		api.BatchItem{IdempotencyKey: "k-9", Schedule: api.ScheduleRequest{Name: "f", Queue: "q", Cron: "*/5 * * * *", TimeZone: "UTC"}}, // 9 created
		api.BatchItem{IdempotencyKey: "k-x", Schedule: api.ScheduleRequest{Name: "g", Queue: "q", Every: "1m", IdempotencyKey: "k-y"}},   // 10 two keys
	}
	body := map[string]any{"items": items}
	res := h.batch(body)
	wants := []want{
		{api.BatchCreated, "", ""},
		{api.BatchError, api.CodeInvalidArgument, "cron"},
		{api.BatchError, api.CodeInvalidTimeZone, "time_zone"},
		{api.BatchError, api.CodeBadRequest, ""},
		{api.BatchError, api.CodeBadRequest, ""},
		{api.BatchError, api.CodeConflict, ""},
		{api.BatchError, api.CodeConflict, ""},
		{api.BatchExists, "", ""},
		{api.BatchError, api.CodeConflict, ""},
		{api.BatchCreated, "", ""},
		{api.BatchError, api.CodeInvalidArgument, "idempotency_key"},
	}
	checkItems(t, res, wants)
	if res.Items[7].Schedule.ScheduleID != res.Items[0].Schedule.ScheduleID {
		t.Errorf("the repeated key answered %s, want item 0's %s", res.Items[7].Schedule.ScheduleID, res.Items[0].Schedule.ScheduleID)
	}
	if s := res.Items[9].Schedule; s.NextFireAt == nil || s.NextFireAt.IsZero() || s.Preview == nil || len(s.Preview) != 0 {
		t.Errorf("a created schedule's answer: want its next firing and an empty preview: %+v", s)
	}
	var got api.Schedule
	h.ok(200, &got, "GET", "/v1/schedules/f", nil)
	if got.ScheduleID != res.Items[9].Schedule.ScheduleID || got.Expression != "*/5 * * * *" {
		t.Errorf("GET f: %+v, want the batch's %s", got, res.Items[9].Schedule.ScheduleID)
	}
	var list api.ScheduleList
	h.ok(200, &list, "GET", "/v1/schedules", nil)
	if len(list.Schedules) != 3 {
		t.Errorf("%d schedules stored, want 3 (taken, a, f)", len(list.Schedules))
	}

	// The same keyed items again: each exists, nothing new.
	again := h.batch(map[string]any{"items": []any{items[0], items[9]}})
	checkItems(t, again, []want{{api.BatchExists, "", ""}, {api.BatchExists, "", ""}})
	if again.Items[0].Schedule.ScheduleID != res.Items[0].Schedule.ScheduleID {
		t.Errorf("replay answered %s, want %s", again.Items[0].Schedule.ScheduleID, res.Items[0].Schedule.ScheduleID)
	}
}

// TestBatchReplayWhole: a batch of keyed items sent twice creates every
// schedule once; the second answer is exists for all, with the same ids.
func TestBatchReplayWhole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var items []api.BatchItem
	for i := range api.MaxBatchItems {
		items = append(items, api.BatchItem{IdempotencyKey: fmt.Sprintf("key-%d", i),
			Schedule: api.ScheduleRequest{Name: fmt.Sprintf("s-%04d", i), Queue: "q", Cron: fmt.Sprintf("%d * * * *", i%60), TimeZone: "UTC"}})
	}
	first := h.batch(api.BatchRequest{Items: items})
	if first.Created != len(items) {
		t.Fatalf("first batch: %d created, %d existing, %d failed; want all %d created", first.Created, first.Existing, first.Failed, len(items))
	}
	second := h.batch(api.BatchRequest{Items: items})
	if second.Existing != len(items) {
		t.Fatalf("replay: %d created, %d existing, %d failed; want all %d existing", second.Created, second.Existing, second.Failed, len(items))
	}
	for i := range items {
		if first.Items[i].Schedule.ScheduleID != second.Items[i].Schedule.ScheduleID {
			t.Fatalf("item %d: %s then %s", i, first.Items[i].Schedule.ScheduleID, second.Items[i].Schedule.ScheduleID)
		}
	}
	// One audit entry for the batch, naming the range of the ids it
	// created; the replay, which created nothing, wrote none.
	_, log, _ := getAudit(t, h, h.ts.URL, "limit=1000")
	var batches []api.AuditEntry
	for _, e := range log.Entries {
		switch e.Action {
		case engine.AuditScheduleCreateBatch:
			batches = append(batches, e)
		case engine.AuditScheduleCreate:
			t.Errorf("a row per schedule: %+v", e)
		}
	}
	ids := func(res api.BatchResult) (first, last string) {
		return res.Items[0].Schedule.ScheduleID, res.Items[len(res.Items)-1].Schedule.ScheduleID
	}
	firstID, lastID := ids(first)
	if len(batches) != 1 || batches[0].Target != record.ScheduleIDRange(firstID, lastID) || batches[0].NewVersion != 1 ||
		!strings.HasPrefix(batches[0].Detail, fmt.Sprintf("%d schedules created", len(items))) {
		t.Fatalf("audit: %+v; want one %s entry of %s..%s", batches, engine.AuditScheduleCreateBatch, firstID, lastID)
	}
	// Each schedule's own audit, by name or id, answers the batch's entry.
	for _, i := range []int{0, 1, 500, len(items) - 1} {
		for _, ref := range []string{items[i].Schedule.Name, first.Items[i].Schedule.ScheduleID} {
			_, own, _ := getAudit(t, h, h.ts.URL, "schedule="+ref)
			if len(own.Entries) != 1 || own.Entries[0] != batches[0] {
				t.Errorf("the audit of %s: %+v, want the batch's entry", ref, own.Entries)
			}
		}
	}
}

// TestBatchAuditRange: a batch whose items fail at its ends and in its
// middle records one entry whose range runs from the first schedule it
// created to the last; the range holds no other schedule, and a
// schedule's audit lists the batch's entry with its own later rows, in
// id order and by pages.
func TestBatchAuditRange(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(everyMinute("taken"))
	items := []api.BatchItem{
		{Schedule: everyMinute("taken")}, // conflict
		{Schedule: everyMinute("a")},
		{Schedule: api.ScheduleRequest{Name: "bad", Queue: "q", Cron: "not a cron"}},
		{Schedule: everyMinute("b")},
		{Schedule: everyMinute("c")},
		{Schedule: everyMinute("a")}, // conflict with item 1
	}
	res := h.batch(api.BatchRequest{Items: items})
	if res.Created != 3 {
		t.Fatalf("%d created, want a, b and c", res.Created)
	}
	a, c := res.Items[1].Schedule.ScheduleID, res.Items[4].Schedule.ScheduleID
	var list api.ScheduleList
	h.ok(200, &list, "GET", "/v1/schedules", nil)
	var inRange []string
	for _, sc := range list.Schedules {
		if sc.ScheduleID >= a && sc.ScheduleID <= c {
			inRange = append(inRange, sc.Name)
		}
	}
	if strings.Join(inRange, ",") != "a,b,c" {
		t.Errorf("schedules in the range %s..%s: %v, want a, b and c", a, c, inRange)
	}

	// A later change of b: its audit is the batch's entry, then the pause.
	h.ok(200, nil, "POST", "/v1/schedules/b/pause", nil)
	_, own, _ := getAudit(t, h, h.ts.URL, "schedule=b")
	if len(own.Entries) != 2 || own.Entries[0].Action != engine.AuditScheduleCreateBatch ||
		own.Entries[0].Target != record.ScheduleIDRange(a, c) || own.Entries[0].Detail != `3 schedules created; first "a", last "c"` ||
		own.Entries[1].Action != engine.AuditSchedulePause {
		t.Fatalf("the audit of b: %+v; want the batch's entry of %s..%s, then the pause", own.Entries, a, c)
	}
	_, page1, _ := getAudit(t, h, h.ts.URL, "schedule=b&limit=1")
	_, page2, _ := getAudit(t, h, h.ts.URL, "schedule=b&limit=1&after="+itoa(page1.NextAfter))
	if len(page1.Entries) != 1 || page1.Entries[0] != own.Entries[0] || len(page2.Entries) != 1 || page2.Entries[0] != own.Entries[1] {
		t.Errorf("by pages of one: %+v then %+v; want %+v", page1.Entries, page2.Entries, own.Entries)
	}
	_, since, _ := getAudit(t, h, h.ts.URL, "schedule=b&since="+own.Entries[1].At.Add(time.Millisecond).Format(time.RFC3339Nano))
	if len(since.Entries) != 0 {
		t.Errorf("since after both: %+v", since.Entries)
	}
	// The schedule made alone keeps its own entry, and is outside the
	// range.
	_, alone, _ := getAudit(t, h, h.ts.URL, "schedule=taken")
	if len(alone.Entries) != 1 || alone.Entries[0].Action != engine.AuditScheduleCreate {
		t.Errorf("the audit of taken: %+v, want its own create", alone.Entries)
	}
}

// TestBatchRefusedWhole: a request wrong as a whole is refused with the
// limit or the problem named, and creates nothing.
func TestBatchRefusedWhole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	over := make([]api.BatchItem, api.MaxBatchItems+1)
	for i := range over {
		over[i] = api.BatchItem{Schedule: everyMinute(fmt.Sprintf("o-%d", i))}
	}
	d := h.fails(400, api.CodeInvalidArgument, "items", "POST", "/v1/schedules:batch", api.BatchRequest{Items: over})
	if !strings.Contains(d.Message, fmt.Sprint(api.MaxBatchItems)) {
		t.Errorf("over the limit: %q does not name the limit %d", d.Message, api.MaxBatchItems)
	}
	h.fails(400, api.CodeInvalidArgument, "items", "POST", "/v1/schedules:batch", api.BatchRequest{})
	h.fails(400, api.CodeBadRequest, "", "POST", "/v1/schedules:batch", `{"items":[`)
	h.fails(400, api.CodeInvalidArgument, "Idempotency-Key", "POST", "/v1/schedules:batch",
		api.BatchRequest{Items: over[:1]}, "Idempotency-Key", "k")
	h.fails(413, api.CodeTooLarge, "", "POST", "/v1/schedules:batch", strings.Repeat(" ", MaxBatchBody+1))
	var list api.ScheduleList
	h.ok(200, &list, "GET", "/v1/schedules", nil)
	if len(list.Schedules) != 0 {
		t.Errorf("refused batches stored %d schedules", len(list.Schedules))
	}
}

// TestBatchQuotaAdmitsSome: under an active_schedules quota a batch
// creates items until the quota is full; the rest get 429's code.
func TestBatchQuotaAdmitsSome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.eng.Tenants.Update(t.Context(), record.DefaultTenant, engine.TenantPatch{ActiveSchedules: new(int64(3))}); err != nil {
		t.Fatal(err)
	}
	h.create(everyMinute("before"))
	var items []api.BatchItem
	for i := range 4 {
		items = append(items, api.BatchItem{Schedule: everyMinute(fmt.Sprintf("q-%d", i))})
	}
	res := h.batch(api.BatchRequest{Items: items})
	checkItems(t, res, []want{{api.BatchCreated, "", ""}, {api.BatchCreated, "", ""},
		{api.BatchError, api.CodeQuotaExceeded, ""}, {api.BatchError, api.CodeQuotaExceeded, ""}})
	if !strings.Contains(res.Items[2].Error.Message, "active_schedules quota of 3") {
		t.Errorf("quota error %q does not name the quota", res.Items[2].Error.Message)
	}
}

// TestBatchTenantIsolation: the same names and keys in another tenant's
// batch are other schedules; each tenant sees its own.
func TestBatchTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withToken("operator-token"))
	ta, tb := h.newTenant("acme"), h.newTenant("beta")
	items := api.BatchRequest{Items: []api.BatchItem{{IdempotencyKey: "k", Schedule: everyMinute("shared")}}}
	a := h.batch(items, bearer(ta)...)
	b := h.batch(items, bearer(tb)...)
	if a.Created != 1 || b.Created != 1 || a.Items[0].Schedule.ScheduleID == b.Items[0].Schedule.ScheduleID {
		t.Fatalf("acme %+v, beta %+v: want one new schedule each", a, b)
	}
	var got api.Schedule
	h.ok(200, &got, "GET", "/v1/schedules/shared", nil, bearer(tb)...)
	if got.ScheduleID != b.Items[0].Schedule.ScheduleID {
		t.Errorf("beta's shared is %s, want its own %s", got.ScheduleID, b.Items[0].Schedule.ScheduleID)
	}
}
