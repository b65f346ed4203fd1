package schedule

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
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
		{"name", CheckName, "tab\there", "name", `name: "tab\there" contains a control character (U+0009)`},
		{"name", CheckName, "\u2028", "name", `name: "\u2028" contains a line or paragraph separator (U+2028)`},
		{"name", CheckName, "del\x7f", "name", `name: "del\x7f" contains a control character (U+007F)`},
		{"name", CheckName, strings.Repeat("é", 65), "name", "name: 130 bytes is over the limit of 128"},
		{"queue", CheckNewQueue, "q.1_a-b:c", "queue", ""},
		{"queue", CheckNewQueue, "q\u200b", "queue", `queue: "q\u200b" contains an invisible or formatting character (U+200B)`},
		{"queue", CheckNewQueue, "q/1", "queue", `queue: "q/1": use only letters, digits and . _ - :`},
		{"queue", CheckNewQueue, "\xff", "queue", "queue: is not valid UTF-8"},
		{"queue upper case", CheckNewQueue, "Emails", "queue", `queue: "Emails": use lowercase letters (emails)`},
		{"queue dots", CheckNewQueue, "..", "queue", `queue: "..": a name must not be only dots`},
		{"queue ref upper case", CheckQueueRef, "Emails", "queue", ""},
		{"queue ref dots", CheckQueueRef, "..", "queue", ""},
		{"queue ref space", CheckQueueRef, "q 1", "queue", `queue: "q 1": use only letters, digits and . _ - :`},
		{"tenant", CheckNewTenant, "acme", "tenant", ""},
		{"tenant", CheckNewTenant, "", "tenant", "tenant: must not be empty"},
		{"tenant", CheckNewTenant, "acme corp", "tenant", `tenant: "acme corp": use only letters, digits and . _ - :`},
		{"tenant", CheckNewTenant, strings.Repeat("t", MaxQueueLen+1), "tenant", "tenant: 65 bytes is over the limit of 64"},
		{"tenant upper case", CheckNewTenant, "Acme", "tenant", `tenant: "Acme": use lowercase letters (acme)`},
		{"tenant dot", CheckNewTenant, ".", "tenant", `tenant: ".": a name must not be only dots`},
		{"tenant ref upper case", CheckTenantRef, "Acme", "tenant", ""},
		{"tenant ref dots", CheckTenantRef, "...", "tenant", ""},
		{"tenant ref invisible", CheckTenantRef, "ac\u2062me", "tenant", `tenant: "ac\u2062me" contains an invisible or formatting character (U+2062)`},
		{"token", CheckTokenName, "ci-2", "name", ""},
		{"token upper case", CheckTokenName, "CI", "name", `name: "CI": use lowercase letters (ci)`},
		{"token dots", CheckTokenName, "...", "name", `name: "...": a name must not be only dots`},
		{"worker", CheckWorkerID, "host-1 (pid 7)", "worker_id", ""},
		{"worker dots", CheckWorkerID, "..", "worker_id", `worker_id: "..": a name must not be only dots`},
		{"worker separator", CheckWorkerID, "w\u2029x", "worker_id", `worker_id: "w\u2029x" contains a line or paragraph separator (U+2029)`},
		{"key", CheckIdempotencyKey, "", "idempotency_key", ""}, // no key
		{"key", CheckIdempotencyKey, "retry 1/2 of job#7", "idempotency_key", ""},
		{"key", CheckIdempotencyKey, "k\u202e", "idempotency_key", `idempotency_key: "k\u202e" contains an invisible or formatting character (U+202E)`},
		{"key", CheckIdempotencyKey, "k\x00", "idempotency_key", `idempotency_key: "k\x00" contains a control character (U+0000)`},
		{"key dots", CheckIdempotencyKey, "...", "idempotency_key", ""}, // a value, not a path segment
		{"key tag character", CheckIdempotencyKey, "k\U000E0041", "idempotency_key", `idempotency_key: "k\U000e0041" contains an invisible or formatting character (U+E0041)`},
		{"key", CheckIdempotencyKey, strings.Repeat("k", MaxIdempotencyKey+1), "idempotency_key", "idempotency_key: 257 bytes is over the limit of 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.check(tt.in), tt.field, tt.msg)
		})
	}
}

// TestCheckName: a schedule's name is printable text that cannot be
// mistaken for an id, a path step, or another name that looks the same.
func TestCheckName(t *testing.T) {
	t.Parallel()
	invisibleMsg := func(in, cp string) string {
		return "name: " + strconv.Quote(in) + " contains an invisible or formatting character (" + cp + ")"
	}
	tests := []struct {
		name string
		in   string
		msg  string // "" = valid
	}{
		// Names valid before stay valid.
		{"ascii", "nightly-report", ""},
		{"unicode letters", "rapport-quotidien-été", ""},
		{"spaces and punctuation", "Nightly report (EU) ü", ""},
		{"slash: escaped in paths", "reports/eu", ""},
		{"dots among text", "v1.2..3", ""},
		{"leading dot", ".hidden", ""},
		{"prefix inside", "my_sch_x", ""},
		{"prefix without underscore", "schedule", ""},
		{"emoji", "backup 🚀", ""},
		{"non-breaking space inside", "a\u00a0b", ""},

		// Shaped like an id.
		{"schedule id", "sch_01hx", `name: "sch_01hx" starts with "sch_", the prefix of an id: a name must not look like an id`},
		{"bare prefix", "sch_", `name: "sch_" starts with "sch_", the prefix of an id: a name must not look like an id`},
		{"upper case prefix", "SCH_x", `name: "SCH_x" starts with "SCH_", the prefix of an id: a name must not look like an id`},
		{"occurrence id", "occ_x", `name: "occ_x" starts with "occ_", the prefix of an id: a name must not look like an id`},
		{"attempt id", "Att_x", `name: "Att_x" starts with "Att_", the prefix of an id: a name must not look like an id`},

		// Path steps.
		{"dot", ".", `name: ".": a name must not be only dots`},
		{"dot dot", "..", `name: "..": a name must not be only dots`},
		{"many dots", "....", `name: "....": a name must not be only dots`},

		// Control characters: C0, DEL, C1.
		{"C0", "a\x1bb", `name: "a\x1bb" contains a control character (U+001B)`},
		{"DEL", "a\x7f", `name: "a\x7f" contains a control character (U+007F)`},
		{"C1", "a\u0085b", `name: "a\u0085b" contains a control character (U+0085)`},
		{"C1 CSI", "a\u009bb", `name: "a\u009bb" contains a control character (U+009B)`},

		// Bidirectional controls.
		{"arabic letter mark", "a\u061cb", invisibleMsg("a\u061cb", "U+061C")},
		{"LRM", "a\u200eb", invisibleMsg("a\u200eb", "U+200E")},
		{"RLM", "a\u200fb", invisibleMsg("a\u200fb", "U+200F")},
		{"LRE", "a\u202ab", invisibleMsg("a\u202ab", "U+202A")},
		{"RLO", "a\u202eb", invisibleMsg("a\u202eb", "U+202E")},
		{"LRI", "a\u2066b", invisibleMsg("a\u2066b", "U+2066")},
		{"PDI", "a\u2069b", invisibleMsg("a\u2069b", "U+2069")},

		// Zero-width and invisible.
		{"zero width space", "a\u200bb", invisibleMsg("a\u200bb", "U+200B")},
		{"ZWNJ", "a\u200cb", invisibleMsg("a\u200cb", "U+200C")},
		{"ZWJ", "a\u200db", invisibleMsg("a\u200db", "U+200D")},
		{"word joiner", "a\u2060b", invisibleMsg("a\u2060b", "U+2060")},
		{"BOM", "\ufeffa", invisibleMsg("\ufeffa", "U+FEFF")},
		{"soft hyphen", "a\u00adb", invisibleMsg("a\u00adb", "U+00AD")},

		// The probe's characters, each of a class refused whole.
		{"invisible times", "a\u2062b", invisibleMsg("a\u2062b", "U+2062")},
		{"mongolian vowel separator", "a\u180eb", invisibleMsg("a\u180eb", "U+180E")},
		{"combining grapheme joiner", "a\u034fb", invisibleMsg("a\u034fb", "U+034F")},
		{"variation selector 16", "a\ufe0fb", invisibleMsg("a\ufe0fb", "U+FE0F")},
		{"emoji with its variation selector", "\u2764\ufe0f", invisibleMsg("\u2764\ufe0f", "U+FE0F")},
		{"tag latin capital A", "a\U000e0041b", invisibleMsg("a\U000e0041b", "U+E0041")},
		{"hangul filler", "a\u3164b", invisibleMsg("a\u3164b", "U+3164")},
		{"hangul filler alone", "\u3164", invisibleMsg("\u3164", "U+3164")},
		{"line separator inside", "a\u2028b", `name: "a\u2028b" contains a line or paragraph separator (U+2028)`},
		{"paragraph separator inside", "a\u2029b", `name: "a\u2029b" contains a line or paragraph separator (U+2029)`},
		{"three dots", "...", `name: "...": a name must not be only dots`},

		// Private use, unassigned, noncharacters.
		{"private use", "a\ue000b", `name: "a\ue000b" contains a private-use character (U+E000)`},
		{"unassigned", "a\u0378b", `name: "a\u0378b" contains a character unassigned in Unicode ` + unicode.Version + ` (U+0378)`},
		{"noncharacter", "a\uffffb", `name: "a\uffffb" contains a character unassigned in Unicode ` + unicode.Version + ` (U+FFFF)`},
		{"surrogate bytes", "a\xed\xa0\x80b", "name: is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, CheckName(tt.in), "name", tt.msg)
		})
	}
}
