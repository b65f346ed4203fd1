package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
)

// The fuzz targets below feed arbitrary request bodies and query strings
// through the decoding the handlers use (decodeBody, schedule.FromRequest,
// Settings.Normalize, claimAcks, attemptNumber, onlyQuery, pageParams),
// without a store: a fuzz iteration stays in microseconds. What they hold:
// nothing panics; a refusal classifies as a 4xx answer with a stable code,
// a message, and a field when the code names a bad argument (never a 500);
// what is accepted survives encoding and decoding again unchanged.

// bodySeeds are nasty inputs shared by the body targets.
var bodySeeds = []string{
	``, `   `, `null`, `[]`, `"x"`, `0`, `{}`, `{}{}`, `{} x`,
	strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1),
	`{"a":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 101),
	"{\"name\":\"\xff\xfe\"}",
	`{"attempt":1e400}`, `{"attempt":99999999999999999999999}`, `{"attempt":-1}`, `{"attempt":1.5}`,
	`{"limit":9223372036854775808}`,
	`{"tenant_id":"t"}`, `{"unknown":1}`,
	`{"attempt":1,"attempt":2}`, `{"name":"a","name":"b"}`,
	`{"name":"\u0000"}`, `{"name":"\ud800"}`, `{"queue":"q\u202e"}`,
	`{"attempt":"1"}`, `{"acks":{}}`, `{"payload":` + strings.Repeat(`[`, 60) + strings.Repeat(`]`, 60) + `}`,
}

// decodeFuzzBody runs body through decodeBody as a handler does.
func decodeFuzzBody(body []byte, v any, optional bool) error {
	r := httptest.NewRequest(http.MethodPost, "/v1/fuzz", bytes.NewReader(body))
	return decodeBody(httptest.NewRecorder(), r, v, optional)
}

// checkRefusal fails t unless err is what a client may be answered: a 4xx
// with a known code and a message, naming the field when the code says an
// argument is bad.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	status, d := classify(err, "")
	if status < 400 || status >= 500 {
		t.Fatalf("refusal %v classifies as %d %+v; want a 4xx", err, status, d)
	}
	switch d.Code {
	case api.CodeBadRequest, api.CodeTooLarge:
	case api.CodeInvalidArgument, api.CodeInvalidTimeZone, api.CodeCronNeverFires:
		if d.Field == "" {
			t.Fatalf("refusal %+v (code %s) names no field", d, d.Code)
		}
	default:
		t.Fatalf("refusal %v has code %q; want bad_request, too_large or an invalid-argument code", err, d.Code)
	}
	if d.Message == "" {
		t.Fatalf("refusal %+v has no message", d)
	}
}

// roundTrip re-encodes v, decodes it again into a fresh value of its type
// through decodeBody, and fails t unless the two are equal.
func roundTrip[T any](t *testing.T, v *T, norm func(*T)) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("re-encoding %+v: %v", v, err)
	}
	var again T
	if err := decodeFuzzBody(b, &again, false); err != nil {
		t.Fatalf("decoding the re-encoded %s: %v", b, err)
	}
	if norm != nil {
		norm(v)
		norm(&again)
	}
	if !reflect.DeepEqual(*v, again) {
		t.Fatalf("round trip changed the value:\n was %+v\n now %+v", *v, again)
	}
}

func FuzzScheduleRequest(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"name":"nightly","queue":"reports","cron":"0 3 * * *","time_zone":"Europe/Berlin","payload":{"b":[1,2],"a":"x"}}`,
		`{"name":"tick","queue":"q","every":"90s","anchor":"2026-01-01T00:00:00Z","misfire_policy":"catch_up:3","max_attempts":5,"retry_base":"2s","retry_cap":"1m","retry_deadline":"2h","flexible_window":"0s","overlap_policy":"queue_one"}`,
		`{"name":"once","queue":"q","at":"2030-05-01T10:00:00+02:00","payload":null,"idempotency_key":"k1"}`,
		`{"name":"dst","queue":"q","cron":"30 2 * * *","time_zone":"America/New_York","dst_gap":"shift","dst_repeat":"all"}`,
		`{"name":"..","queue":"q","every":"1m"}`,
		`{"name":"n","queue":"q","cron":"0 0 31 2 *","time_zone":"UTC"}`,
		`{"name":"n","queue":"q","every":"1m","time_zone":"Mars/Olympus"}`,
		`{"name":"n","queue":"q","every":"1m","max_attempts":-1,"misfire_policy":"catch_up:0"}`,
		`{"name":"n","queue":"q","every":"1m","max_lateness":"-5s","payload":"<&>\u2028"}`,
		`{"name":"n","queue":"q","every":"9223372036854775807ns","retry_base":"1e9h"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req api.ScheduleRequest
		if err := decodeFuzzBody(body, &req, false); err != nil {
			checkRefusal(t, err)
			return
		}
		// A payload is re-encoded compact with <, > and & escaped:
		// compare it by meaning.
		roundTrip(t, &req, func(r *api.ScheduleRequest) {
			if r.Payload == nil {
				return
			}
			c, err := schedule.CanonicalPayload(r.Payload)
			if err != nil {
				t.Fatalf("payload %q decoded but is not canonical: %v", r.Payload, err)
			}
			r.Payload = json.RawMessage(c)
		})
		set, err := schedule.FromRequest(&req)
		if err != nil {
			checkRefusal(t, err)
			var ve *schedule.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("FromRequest refused with %T %v; want a *schedule.ValidationError", err, err)
			}
			return
		}
		sp, err := set.Normalize()
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if sp == nil {
			t.Fatalf("settings %+v accepted with no timetable", set)
		}
	})
}

func FuzzClaimRequest(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"queue":"q","worker_id":"w1"}`,
		`{"queue":"q","worker_id":"w1","limit":10,"lease":"45s","wait":"20s","acks":[{"occurrence_id":"o1","attempt":1},{"occurrence_id":"o2","attempt":3}]}`,
		`{"queue":"q","worker_id":"w1","wait":"6m"}`,
		`{"queue":"q","worker_id":"w1","lease":"0s","wait":"-1s"}`,
		`{"queue":"q","acks":[{"occurrence_id":"","attempt":1}]}`,
		`{"queue":"q","acks":[{"occurrence_id":"o","attempt":0}]}`,
		`{"queue":"q","acks":[{"occurrence_id":"o","attempt":1,"extra":true}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req api.ClaimRequest
		if err := decodeFuzzBody(body, &req, false); err != nil {
			checkRefusal(t, err)
			return
		}
		roundTrip(t, &req, func(r *api.ClaimRequest) {
			if len(r.Acks) == 0 {
				r.Acks = nil // omitempty: [] comes back absent
			}
		})
		acks, err := claimAcks(req.Acks)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if len(acks) != len(req.Acks) || len(acks) > engine.MaxClaimBatch {
			t.Fatalf("claimAcks took %d of %d acks", len(acks), len(req.Acks))
		}
		for i, a := range acks {
			if a.Attempt < 1 || a.OccurrenceID == "" || len(a.OccurrenceID) > maxOccurrenceID ||
				a.OccurrenceID != req.Acks[i].OccurrenceID || a.Attempt != req.Acks[i].Attempt {
				t.Fatalf("ack %d taken as %+v from %+v", i, a, req.Acks[i])
			}
		}
		if _, err := schedule.ParseDuration("lease", req.Lease, false); err != nil {
			checkRefusal(t, err)
		}
		if _, err := schedule.ParseDuration("wait", req.Wait, true); err != nil {
			checkRefusal(t, err)
		}
	})
}

// FuzzOccurrenceBodies decodes one body as a heartbeat, an ack and a nack.
func FuzzOccurrenceBodies(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"attempt":1}`, `{"attempt":2,"lease":"1m"}`, `{"attempt":1,"class":"retryable","error":"boom \u00e9"}`,
		`{"attempt":1,"class":"permanent"}`, `{"attempt":0,"lease":"0s"}`, `{"attempt":9223372036854775807}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var hb api.HeartbeatRequest
		if err := decodeFuzzBody(body, &hb, false); err != nil {
			checkRefusal(t, err)
		} else {
			roundTrip(t, &hb, nil)
			if err := attemptNumber(hb.Attempt); err != nil {
				checkRefusal(t, err)
			}
			if _, err := schedule.ParseDuration("lease", hb.Lease, false); err != nil {
				checkRefusal(t, err)
			}
		}
		var ack api.AckRequest
		if err := decodeFuzzBody(body, &ack, false); err != nil {
			checkRefusal(t, err)
		} else {
			roundTrip(t, &ack, nil)
			if err := attemptNumber(ack.Attempt); (err == nil) != (ack.Attempt >= 1) {
				t.Fatalf("attempt %d: attemptNumber says %v", ack.Attempt, err)
			} else if err != nil {
				checkRefusal(t, err)
			}
		}
		var nack api.NackRequest
		if err := decodeFuzzBody(body, &nack, false); err != nil {
			checkRefusal(t, err)
		} else {
			roundTrip(t, &nack, nil)
		}
	})
}

// FuzzListQuery parses a raw query string as the list routes do.
func FuzzListQuery(f *testing.F) {
	tok := pageToken{List: "occurrences", Desc: true, ID: "o1", At: 1700000000000}.encode()
	for _, s := range []string{
		``, `limit=10`, `limit=0`, `limit=-1`, `limit=1001`, `limit=99999999999999999999`, `limit=1e3`, `limit=%20%31`,
		`order=desc`, `order=DESC`, `limit=1&limit=2`, `page=` + tok, `page=` + tok + `&order=desc`,
		`page=e30`, `page=!!!`, `page=eyJsIjoiZGxxIiwiaSI6IngifQ`, `state=ACTIVE&page=`, `=x`, `%zz=1`, `a;b=c`,
		"limit=\xff", `page=` + strings.Repeat("A", 5000),
	} {
		f.Add(s)
	}
	lists := []struct {
		name    string
		ordered bool
	}{{"schedules", false}, {"occurrences", true}, {"dlq", true}, {"attempts", false}}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest(http.MethodGet, "/v1/fuzz", nil)
		r.URL.RawQuery = query
		if err := onlyQuery(r, "state", "page", "limit", "order"); err != nil {
			checkRefusal(t, err)
		}
		for _, l := range lists {
			limit, desc, tok, err := pageParams(r, l.name, l.ordered)
			if err != nil {
				checkRefusal(t, err)
				continue
			}
			if limit < 1 || limit > 1000 {
				t.Fatalf("%s: limit %d accepted", l.name, limit)
			}
			if desc && !l.ordered {
				t.Fatalf("%s: an unordered list took order=desc", l.name)
			}
			if tok == nil {
				continue
			}
			if tok.List != l.name || tok.Desc != desc || tok.ID == "" {
				t.Fatalf("%s: token %+v accepted for desc=%v", l.name, *tok, desc)
			}
			// A token accepted once is accepted again as encoded
			// anew, naming the same position.
			r2 := httptest.NewRequest(http.MethodGet, "/v1/fuzz", nil)
			q := r2.URL.Query()
			q.Set("page", tok.encode())
			if desc {
				q.Set("order", "desc")
			}
			r2.URL.RawQuery = q.Encode()
			_, _, tok2, err := pageParams(r2, l.name, l.ordered)
			if err != nil || tok2 == nil || *tok2 != *tok {
				t.Fatalf("%s: token %+v re-encoded reads back as %+v, %v", l.name, *tok, tok2, err)
			}
		}
	})
}

// FuzzTenantBodies: the bodies of the tenant routes (a tenant's create or
// change, a token's create) through decodeBody and the checks of the
// engine's tenant rules, without a store: a refusal is a 4xx naming its
// field; an accepted tenant's weight and quotas are in range and survive
// encoding again.
func FuzzTenantBodies(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"name":"acme"}`, `{"name":"acme","weight":2,"quotas":{"running":5}}`,
		`{"weight":0}`, `{"weight":1001}`, `{"weight":-1}`, `{"quotas":{"active_schedules":-1}}`,
		`{"quotas":{"firings_per_second":1000000001}}`, `{"quotas":{"api_requests_per_second":1e3}}`,
		`{"name":"bad name"}`, `{"name":"` + strings.Repeat("a", 300) + `"}`, `{"name":"ci","role":"admin"}`,
		`{"name":"ci","role":"root"}`, `{"quotas":null}`, `{"quotas":{"running":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req api.TenantRequest
		if err := decodeFuzzBody(body, &req, false); err != nil {
			checkRefusal(t, err)
		} else {
			tn := record.Tenant{Weight: 1}
			err := tenantPatch(&req).Apply(&tn)
			if err == nil && req.Name != "" {
				err = schedule.CheckNewTenant(req.Name)
			}
			if err != nil {
				checkRefusal(t, err)
			} else {
				if tn.Weight < 1 || tn.Weight > record.MaxTenantWeight || tn.Quotas.Running < 0 || tn.Quotas.ActiveSchedules < 0 {
					t.Fatalf("accepted %s as %+v", body, tn)
				}
				roundTrip(t, &req, nil)
			}
		}
		var tok api.TokenRequest
		if err := decodeFuzzBody(body, &tok, false); err != nil {
			checkRefusal(t, err)
		} else if err := schedule.CheckTokenName(tok.Name); err != nil {
			checkRefusal(t, err)
		}
	})
}
