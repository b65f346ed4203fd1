package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
)

// A create past the tenant's active_schedules quota is answered 429
// quota_exceeded, with a message naming the quota and its value.
func TestCreateOverQuotaIs429(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.eng.Tenants.Update(t.Context(), record.DefaultTenant, engine.TenantPatch{ActiveSchedules: new(int64(1))}); err != nil {
		t.Fatal(err)
	}
	h.create(api.ScheduleRequest{Name: "first", Queue: "q", Every: "1m"})
	status, raw := h.do("POST", "/v1/schedules", api.ScheduleRequest{Name: "second", Queue: "q", Every: "1m"})
	var eb api.ErrorBody
	if err := json.Unmarshal(raw, &eb); err != nil {
		t.Fatalf("%d %s: %v", status, raw, err)
	}
	if status != 429 || eb.Error.Code != api.CodeQuotaExceeded || !strings.Contains(eb.Error.Message, "active_schedules quota of 1 schedules") {
		t.Fatalf("second create: %d %s, want 429 %s naming active_schedules and 1", status, raw, api.CodeQuotaExceeded)
	}
}

func TestClassifyQuotaError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err        error
		retryAfter string
	}{
		{&engine.QuotaError{Tenant: "a", Quota: "active_schedules", Limit: 5, Unit: "schedules"}, ""},
		{fmt.Errorf("create: %w", &engine.QuotaError{Tenant: "a", Quota: "api_requests_per_second", Limit: 5, Unit: "requests/s", RetryAfter: 1500 * time.Millisecond}), "2"},
	} {
		status, d := classify(tc.err, "")
		if status != 429 || d.Code != api.CodeQuotaExceeded || !strings.Contains(d.Message, "quota of 5") {
			t.Errorf("classify(%v) = %d %+v, want 429 %s naming the quota", tc.err, status, d, api.CodeQuotaExceeded)
		}
		if got := retryAfter(tc.err); got != tc.retryAfter {
			t.Errorf("retryAfter(%v) = %q, want %q", tc.err, got, tc.retryAfter)
		}
	}
}
