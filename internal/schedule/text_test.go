package schedule

import (
	"strings"
	"testing"
)

// TestCheckText: the rules of names, queues, tenants and keys, each with a
// text it takes and one it refuses.
func TestCheckText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		check func(string) error
		in    string
		field string
		msg   string // "" = valid
	}{
		{"name", CheckName, "Nightly report (EU) ü", "name", ""},
		{"name", CheckName, "", "name", "name: must not be empty"},
		{"name", CheckName, " lead", "name", `name: " lead" has leading or trailing space`},
		{"name", CheckName, "tab\there", "name", `name: "tab\there" contains a control character`},
		{"name", CheckName, "\u2028", "name", `name: "\u2028" has leading or trailing space`},
		{"name", CheckName, "del\x7f", "name", `name: "del\x7f" contains a control character`},
		{"name", CheckName, strings.Repeat("é", 65), "name", "name: 130 bytes is over the limit of 128"},
		{"queue", CheckQueue, "q.1_a-b:c", "queue", ""},
		{"queue", CheckQueue, "q/1", "queue", `queue: "q/1": use only letters, digits and . _ - :`},
		{"queue", CheckQueue, "\xff", "queue", "queue: is not valid UTF-8"},
		{"tenant", CheckTenant, "acme", "tenant", ""},
		{"tenant", CheckTenant, "", "tenant", "tenant: must not be empty"},
		{"tenant", CheckTenant, "acme corp", "tenant", `tenant: "acme corp": use only letters, digits and . _ - :`},
		{"tenant", CheckTenant, strings.Repeat("t", MaxQueueLen+1), "tenant", "tenant: 65 bytes is over the limit of 64"},
		{"key", CheckIdempotencyKey, "", "idempotency_key", ""}, // no key
		{"key", CheckIdempotencyKey, "retry 1/2 of job#7", "idempotency_key", ""},
		{"key", CheckIdempotencyKey, "k\x00", "idempotency_key", `idempotency_key: "k\x00" contains a control character`},
		{"key", CheckIdempotencyKey, strings.Repeat("k", MaxIdempotencyKey+1), "idempotency_key", "idempotency_key: 257 bytes is over the limit of 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.check(tt.in), tt.field, tt.msg)
		})
	}
}
