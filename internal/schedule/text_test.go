package schedule

import (
	"strconv"
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
		{"queue", CheckQueue, "q\u200b", "queue", `queue: "q\u200b" contains an invisible or bidirectional formatting character (U+200B)`},
		{"queue", CheckQueue, "q/1", "queue", `queue: "q/1": use only letters, digits and . _ - :`},
		{"queue", CheckQueue, "\xff", "queue", "queue: is not valid UTF-8"},
		{"tenant", CheckTenant, "acme", "tenant", ""},
		{"tenant", CheckTenant, "", "tenant", "tenant: must not be empty"},
		{"tenant", CheckTenant, "acme corp", "tenant", `tenant: "acme corp": use only letters, digits and . _ - :`},
		{"tenant", CheckTenant, strings.Repeat("t", MaxQueueLen+1), "tenant", "tenant: 65 bytes is over the limit of 64"},
		{"key", CheckIdempotencyKey, "", "idempotency_key", ""}, // no key
		{"key", CheckIdempotencyKey, "retry 1/2 of job#7", "idempotency_key", ""},
		{"key", CheckIdempotencyKey, "k\u202e", "idempotency_key", `idempotency_key: "k\u202e" contains an invisible or bidirectional formatting character (U+202E)`},
		{"key", CheckIdempotencyKey, "k\x00", "idempotency_key", `idempotency_key: "k\x00" contains a control character`},
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
		return "name: " + strconv.Quote(in) + " contains an invisible or bidirectional formatting character (" + cp + ")"
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
		{"C0", "a\x1bb", `name: "a\x1bb" contains a control character`},
		{"DEL", "a\x7f", `name: "a\x7f" contains a control character`},
		{"C1", "a\u0085b", `name: "a\u0085b" contains a control character`},
		{"C1 CSI", "a\u009bb", `name: "a\u009bb" contains a control character`},

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, CheckName(tt.in), "name", tt.msg)
		})
	}
}
