package schedule

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sched-dev/sched/internal/record"
)

// CheckText is the one character rule of every name and key a caller
// gives (schedules, queues, tenants, tokens, workers, nodes, idempotency
// keys): it refuses empty text, text over max bytes, invalid UTF-8 (which
// covers the surrogates), any character refusedRune names, and leading or
// trailing space (Unicode's White_Space). strict also limits the text to
// ASCII letters, digits and . _ - : (queue and tenant names end up in
// metric labels and URLs). The rules of a name class (dots, case, id
// prefixes) are on top of it, in the Check functions below. Errors are
// *ValidationError of field and name the character (U+XXXX).
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
		if what, bad := refusedRune(r); bad {
			return Invalid(field, "%q contains %s (%U)", s, what, r)
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

// refusedRune says whether no name may hold r, and what r is, for the
// error. The refused characters are those that would let two names which
// print alike differ, let a name pass itself off as another, or break the
// line it is printed on; they come from the Unicode tables of the Go
// release sched is built with, so the whole of each class is refused and
// not a hand-picked part:
//
//   - control characters (Cc: C0, DEL, C1);
//   - format characters (Cf: bidirectional controls, zero-width joiners
//     and spaces, the soft hyphen, tag characters, ...), with the other
//     default-ignorable code points (Hangul fillers, the combining
//     grapheme joiner, U+180E ...) and the variation selectors: together
//     they hold every default-ignorable code point, the characters a
//     terminal or a log line shows as nothing;
//   - line and paragraph separators (Zl, Zp), which break a line;
//   - private-use characters (Co), whose look depends on the font;
//   - unassigned code points and noncharacters (Cn), whose look is
//     unknown and which a later Unicode may make format characters. A
//     character newer than the tables is refused too, until sched is
//     built with a Go that knows it;
//   - surrogates (Cs), which valid UTF-8 cannot hold: CheckText refuses
//     them first, as invalid UTF-8.
func refusedRune(r rune) (what string, refused bool) {
	if r < utf8.RuneSelf { // the fast path of ASCII: only controls
		return "a control character", r < 0x20 || r == 0x7f
	}
	switch {
	case unicode.Is(unicode.Cc, r):
		return "a control character", true
	case unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector):
		return "an invisible or formatting character", true
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return "a line or paragraph separator", true
	case unicode.Is(unicode.Co, r):
		return "a private-use character", true
	case unicode.Is(unicode.Cs, r):
		return "a surrogate", true
	case unicode.Is(unicode.Cn, r):
		return "a character unassigned in Unicode " + unicode.Version, true
	}
	return "", false
}

// notOnlyDots refuses a name made only of dots: . and .. are path steps,
// and every name is, or may become, one segment of the API's URLs.
func notOnlyDots(field, s string) error {
	if strings.Trim(s, ".") == "" {
		return Invalid(field, "%q: a name must not be only dots", s)
	}
	return nil
}

// idPrefixes are the prefixes of the ids sched mints. A name must not
// start with one: commands take a schedule by id or by name, and a name
// shaped like an id could be taken for (or hide behind) another record.
var idPrefixes = []string{record.SchedulePrefix, record.OccurrencePrefix, record.AttemptPrefix}

// CheckName checks a schedule's name: a free name up to MaxNameLen bytes
// (CheckFreeName), not starting with an id prefix (sch_, occ_, att_, in
// any case). Any other character, '/' included, is allowed: the client
// escapes names in paths.
func CheckName(name string) error {
	if err := CheckFreeName("name", name, MaxNameLen); err != nil {
		return err
	}
	for _, p := range idPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return Invalid("name", "%q starts with %q, the prefix of an id: a name must not look like an id", name, name[:len(p)])
		}
	}
	return nil
}

// CheckStoredName checks a schedule's name as a reference to one stored
// before the rule of names (Settings.NormalizeUpdate): not empty, up to
// MaxNameLen bytes of valid UTF-8, what any name stored ever was.
func CheckStoredName(name string) error {
	switch {
	case name == "":
		return Invalid("name", "must not be empty")
	case len(name) > MaxNameLen:
		return Invalid("name", "%d bytes is over the limit of %d", len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return Invalid("name", "is not valid UTF-8")
	}
	return nil
}

// CheckFreeName checks a name of field that may hold any printable text
// (a worker's id, a node's): CheckText's rule up to max bytes, and not
// made only of dots.
func CheckFreeName(field, s string, max int) error {
	if err := CheckText(field, s, max, false); err != nil {
		return err
	}
	return notOnlyDots(field, s)
}

// CheckWorkerID checks the worker_id of a claim: a free name up to
// MaxNameLen bytes.
func CheckWorkerID(id string) error { return CheckFreeName("worker_id", id, MaxNameLen) }

// checkStrictName checks a queue's name, a tenant id or a token's name,
// given in field: letters, digits and . _ - : up to MaxQueueLen bytes. A
// new one (a tenant or token created, a queue a schedule is created or
// updated with) is also lowercase and not only dots, so that no two differ
// only in case and each can be a segment of a URL. A reference to one
// (a claim, a filter, a lookup) takes the old charset with upper case and
// dots, so that what was stored before the rule stays reachable.
func checkStrictName(field, s string, isNew bool) error {
	if err := CheckText(field, s, MaxQueueLen, true); err != nil || !isNew {
		return err
	}
	if err := notOnlyDots(field, s); err != nil {
		return err
	}
	if lower := strings.ToLower(s); lower != s {
		return Invalid(field, "%q: use lowercase letters (%s)", s, lower)
	}
	return nil
}

// CheckNewQueue checks the queue a schedule is created or updated with
// (checkStrictName's rule of a new name).
func CheckNewQueue(queue string) error { return checkStrictName("queue", queue, true) }

// CheckQueueRef checks a queue a claim names (checkStrictName's rule of a
// reference: upper case is taken, for queues stored before the rule).
func CheckQueueRef(queue string) error { return checkStrictName("queue", queue, false) }

// CheckTargetName checks the name of a target being created or named by
// a schedule (checkStrictName's rule of a new name: it is a segment of
// the target's URL, and its queue's name after the @).
func CheckTargetName(name string) error { return checkStrictName("target", name, true) }

// CheckNewTenant checks the id of a tenant being created
// (checkStrictName's rule of a new name).
func CheckNewTenant(tenantID string) error { return checkStrictName("tenant", tenantID, true) }

// CheckTenantRef checks a tenant id a request names (checkStrictName's
// rule of a reference: upper case is taken, for tenants created before
// the rule).
func CheckTenantRef(tenantID string) error { return checkStrictName("tenant", tenantID, false) }

// CheckTokenName checks the name of a token being created, in field name
// (checkStrictName's rule of a new name: it is a segment of the revoke
// URL).
func CheckTokenName(name string) error { return checkStrictName("name", name, true) }

// CheckIdempotencyKey checks a create's idempotency key: CheckText's rule
// up to MaxIdempotencyKey bytes (a key is a value, never a path segment,
// so dots alone are fine). The empty key is no key, and valid.
func CheckIdempotencyKey(key string) error {
	if key == "" {
		return nil
	}
	return CheckText("idempotency_key", key, MaxIdempotencyKey, false)
}
