package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
)

// MaxBatchBody is the limit on the body of POST /v1/schedules:batch: room
// for api.MaxBatchItems schedules of a few KiB each (a batch of large
// payloads must be smaller), where every other route keeps MaxBody.
const MaxBatchBody = 16 << 20

// batchPath is the bulk create's route.
const batchPath = "/v1/schedules:batch"

// maxBodyOf is the limit on r's body: MaxBatchBody for the bulk create,
// MaxBody for every other route.
func maxBodyOf(r *http.Request) int64 {
	if r.Method == http.MethodPost && r.URL.Path == batchPath {
		return MaxBatchBody
	}
	return MaxBody
}

// batchBody is the request as read first: each item is decoded on its
// own (decodeJSON), so that a malformed item fails alone and its error
// names its index.
type batchBody struct {
	Items []json.RawMessage `json:"items"`
}

// createSchedules serves POST /v1/schedules:batch: each item is read and
// converted like the body of POST /v1/schedules, then every valid one is
// created by one engine.CreateBatch (one store transaction). The answer
// is 200 with a result per item; only a request that is wrong as a whole
// (not JSON, no items, over the limit) is refused.
func (s *Server) createSchedules(r *http.Request, w http.ResponseWriter) (int, any, error) {
	dry, err := dryRun(r)
	if err != nil {
		return 0, nil, err
	}
	if r.Header.Get("Idempotency-Key") != "" {
		return 0, nil, invalidArg("Idempotency-Key", "a batch takes an idempotency_key per item, not the Idempotency-Key header")
	}
	var body batchBody
	if err := decodeBodyMax(w, r, &body, false, MaxBatchBody); err != nil {
		return 0, nil, err
	}
	if len(body.Items) == 0 {
		return 0, nil, invalidArg("items", "a batch needs at least one item")
	}
	if len(body.Items) > api.MaxBatchItems {
		return 0, nil, invalidArg("items", fmt.Sprintf("%d items are over the limit of %d per batch; send several batches", len(body.Items), api.MaxBatchItems))
	}
	res := api.BatchResult{Items: make([]api.BatchItemResult, len(body.Items)), DryRun: dry}
	items := make([]engine.BatchItem, 0, len(body.Items))
	where := make([]int, 0, len(body.Items)) // items[k] is the request's item where[k]
	for i, raw := range body.Items {
		res.Items[i].Index = i
		it, err := batchItem(raw)
		if err != nil {
			fail(&res.Items[i], err)
			continue
		}
		items = append(items, it)
		where = append(where, i)
	}
	create := s.eng.Control.CreateBatch
	if dry {
		create = s.eng.Control.CheckBatch
	}
	outs, err := create(r.Context(), tenantOf(r), items)
	if err != nil {
		return 0, nil, err
	}
	for k, o := range outs {
		ir := &res.Items[where[k]]
		switch {
		case o.Err != nil:
			fail(ir, o.Err)
		case o.Created:
			// Just created: nothing of it is on the queue yet, so its
			// next firing is its cursor, with no store read.
			out := batchSchedule(o.Schedule, nextOfNew(o.Schedule))
			ir.Status, ir.Schedule = api.BatchCreated, &out
		default:
			next, err := s.eng.Control.NextFire(r.Context(), o.Schedule)
			if err != nil {
				return 0, nil, err
			}
			out := batchSchedule(o.Schedule, next)
			ir.Status, ir.Schedule = api.BatchExists, &out
		}
	}
	for _, ir := range res.Items {
		switch ir.Status {
		case api.BatchCreated:
			res.Created++
		case api.BatchExists:
			res.Existing++
		default:
			res.Failed++
		}
	}
	return http.StatusOK, res, nil
}

// batchItem reads and converts one item of the request, as createSchedule
// does a whole body.
func batchItem(raw json.RawMessage) (engine.BatchItem, error) {
	var it api.BatchItem
	if err := decodeJSON(raw, &it, "the item"); err != nil {
		return engine.BatchItem{}, err
	}
	key := it.IdempotencyKey
	if k := it.Schedule.IdempotencyKey; k != "" {
		if key != "" && key != k {
			return engine.BatchItem{}, invalidArg("idempotency_key", "the item's idempotency_key and its schedule's differ; send one")
		}
		key = k
	}
	sp, err := schedule.FromRequest(&it.Schedule)
	if err != nil {
		return engine.BatchItem{}, err
	}
	return engine.BatchItem{IdempotencyKey: key, Settings: sp}, nil
}

// batchSchedule is a schedule as a bulk create answers it: as the API
// shows it everywhere, but without the preview of its next firings (empty),
// which would cost a parse of its timetable and five firings for each of
// up to 1,000 schedules that a bulk create's caller rarely looks at; GET
// the schedule for it.
func batchSchedule(sc *record.Schedule, nextFire time.Time) api.Schedule {
	out := apiScheduleFields(sc, nextFire)
	out.Preview = []api.Firing{}
	return out
}

// nextOfNew is a new schedule's next firing not yet delivered (see
// engine.NextFire): its cursor while ACTIVE, none otherwise.
func nextOfNew(sc *record.Schedule) time.Time {
	if sc.State == record.ScheduleActive {
		return sc.NextRunAt
	}
	return time.Time{}
}

// fail sets ir's error as a single create would answer it (the code and
// field of classify), its message naming the item.
func fail(ir *api.BatchItemResult, err error) {
	_, d := classify(err, "")
	d.Message = fmt.Sprintf("item %d: %s", ir.Index, d.Message)
	ir.Status, ir.Schedule, ir.Error = api.BatchError, nil, &d
}
