package api

// MaxBatchItems is the most schedules one POST /v1/schedules:batch
// creates; a longer list is refused whole (400).
const MaxBatchItems = 1000

// BatchRequest is the body of POST /v1/schedules:batch: schedules to
// create, each as the body of POST /v1/schedules, in one request and one
// store transaction.
type BatchRequest struct {
	Items []BatchItem `json:"items"`
}

// BatchItem is one schedule of a bulk create. IdempotencyKey makes the
// item safe to send again, as for a single create (it may also be given
// as Schedule.IdempotencyKey; when both are set they must be equal).
type BatchItem struct {
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Schedule       ScheduleRequest `json:"schedule"`
}

// The status of one item of a bulk create.
const (
	BatchCreated = "created" // a new schedule
	BatchExists  = "exists"  // its idempotency key and body match a schedule created before
	BatchError   = "error"   // refused; Error says why, with the code a single create would give
)

// BatchItemResult is what became of one item, by its index in the
// request. Schedule is set unless the item failed; Error only when it did.
type BatchItemResult struct {
	Index    int          `json:"index"`
	Status   string       `json:"status"`
	Schedule *Schedule    `json:"schedule"`
	Error    *ErrorDetail `json:"error"`
}

// BatchResult answers POST /v1/schedules:batch (200 whatever became of
// the items): each item's result, in the request's order, and the counts.
type BatchResult struct {
	Items    []BatchItemResult `json:"items"`
	Created  int               `json:"created"`
	Existing int               `json:"existing"`
	Failed   int               `json:"failed"`
	// DryRun is true in the answer to ?dry_run=true: the items as the
	// batch would have answered them ("created": would be created), none
	// of them kept.
	DryRun bool `json:"dry_run,omitempty"`
}
