package schedule

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sched-dev/sched/internal/record"
)

// CheckText refuses empty, over-long (in bytes), invalid UTF-8, control
// characters (C0, DEL, C1), invisible characters (see invisible), and
// leading or trailing space. strict also limits the text to ASCII letters,
// digits and . _ - : (queue and tenant names end up in metric labels and
// URLs). Errors are *ValidationError of field.
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
		if invisible(r) {
			return Invalid(field, "%q contains an invisible or bidirectional formatting character (%U)", s, r)
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

// invisible reports the characters that print as nothing, or that reorder
// the text around them, so that two names which look the same on a
// terminal or in a log line can differ, or a name can pass itself off as
// another: the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069), the zero-width ones (U+200B-U+200D), the
// word joiner U+2060, the byte-order mark U+FEFF and the soft hyphen
// U+00AD.
func invisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x061C, r == 0x2060, r == 0xFEFF:
		return true
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// idPrefixes are the prefixes of the ids sched mints. A name must not
// start with one: commands take a schedule by id or by name, and a name
// shaped like an id could be taken for (or hide behind) another record.
var idPrefixes = []string{record.SchedulePrefix, record.OccurrencePrefix, record.AttemptPrefix}

// CheckName checks a schedule's name: printable text up to MaxNameLen
// bytes (CheckText's rule), not starting with an id prefix (sch_, occ_,
// att_, in any case), and not made only of dots (. and .. are path steps,
// and a name is one segment of the API's URLs). Any other character, '/'
// included, is allowed: the client escapes names in paths.
func CheckName(name string) error {
	if err := CheckText("name", name, MaxNameLen, false); err != nil {
		return err
	}
	for _, p := range idPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return Invalid("name", "%q starts with %q, the prefix of an id: a name must not look like an id", name, name[:len(p)])
		}
	}
	if strings.Trim(name, ".") == "" {
		return Invalid("name", "%q: a name must not be only dots", name)
	}
	return nil
}

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
