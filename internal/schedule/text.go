package schedule

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText refuses empty, over-long (in bytes), invalid UTF-8 and control
// characters, and leading or trailing space. strict also limits the text
// to ASCII letters, digits and . _ - : (queue and tenant names end up in
// metric labels and URLs). Errors are *ValidationError of field.
func CheckText(field, s string, max int, strict bool) error {
	switch {
	case s == "":
		return Invalid(field, "must not be empty")
	case len(s) > max:
		return Invalid(field, "%d bytes is over the limit of %d", len(s), max)
	case !utf8.ValidString(s):
		return Invalid(field, "is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return Invalid(field, "%q contains a control character", s)
		}
		if strict && !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-:", r))) {
			return Invalid(field, "%q: use only letters, digits and . _ - :", s)
		}
	}
	if s != strings.TrimSpace(s) {
		return Invalid(field, "%q has leading or trailing space", s)
	}
	return nil
}

// CheckName checks a schedule's name: any printable text up to MaxNameLen
// bytes.
func CheckName(name string) error { return CheckText("name", name, MaxNameLen, false) }

// CheckQueue checks a queue's name, a schedule's or a claim's: letters,
// digits and . _ - : up to MaxQueueLen bytes.
func CheckQueue(queue string) error { return CheckText("queue", queue, MaxQueueLen, true) }

// CheckTenant checks a tenant id, by the rule of queue names.
func CheckTenant(tenantID string) error { return CheckText("tenant", tenantID, MaxQueueLen, true) }

// CheckIdempotencyKey checks a create's idempotency key. The empty key is
// no key, and valid.
func CheckIdempotencyKey(key string) error {
	if key == "" {
		return nil
	}
	return CheckText("idempotency_key", key, MaxIdempotencyKey, false)
}
