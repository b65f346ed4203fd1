package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refusedByTables is the test's own reading of the character rule, from
// the Unicode tables and not from refusedRune: every "other" character
// (C: Cc, Cf, Co, Cs and Cn, the unassigned code points and the
// noncharacters), the line and paragraph separators, the other
// default-ignorable code points and the variation selectors.
func refusedByTables(r rune) bool {
	return unicode.In(r, unicode.C, unicode.Zl, unicode.Zp,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// encode is r in UTF-8, surrogates included (as the 3 bytes that
// utf8.EncodeRune will not write), so that a test can send them.
func encode(r rune) string {
	if r >= 0xD800 && r <= 0xDFFF {
		return string([]byte{0xE0 | byte(r>>12), 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F})
	}
	return string(r)
}

// strictASCII reports the characters of a strict name: ASCII letters,
// digits and . _ - :, and only lowercase letters when lower.
func strictASCII(r rune, lower bool) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9', strings.ContainsRune("._-:", r):
		return true
	case r >= 'A' && r <= 'Z':
		return !lower
	}
	return false
}

// rangeEnds is the first and last code point of each range of tabs.
func rangeEnds(tabs ...*unicode.RangeTable) map[rune]bool {
	ends := map[rune]bool{}
	for _, tab := range tabs {
		for _, r := range tab.R16 {
			ends[rune(r.Lo)], ends[rune(r.Hi)] = true, true
		}
		for _, r := range tab.R32 {
			ends[rune(r.Lo)], ends[rune(r.Hi)] = true, true
		}
	}
	return ends
}

// TestEveryRune holds the character rule to the Unicode tables over every
// code point: refusedRune refuses exactly the refused classes. Then
// CheckText, with the code point in the middle of a name, at its start and
// at its end, refuses exactly those, plus white space at either end, and
// names the code point in its error; a strict name (a reference to a
// queue) takes exactly ASCII letters, digits and . _ - :, and a new
// tenant id only lowercase ones (tried up to U+2FFF). The unassigned and private-use code
// points (nearly a million, in long ranges) go through CheckText by the
// two ends of each range, so that the test stays quick.
func TestEveryRune(t *testing.T) {
	t.Parallel()
	wrong := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if wrong++; wrong <= 20 {
			t.Errorf(format, args...)
		}
	}
	ends := rangeEnds(unicode.Cn, unicode.Co)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if other, assigned := unicode.Is(unicode.C, r), unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z); other == assigned {
			fail("%U: in C %v, in L, M, N, P, S or Z %v: want exactly one", r, other, assigned)
		}
		refused := refusedByTables(r)
		if what, got := refusedRune(r); got != refused || got && what == "" {
			fail("refusedRune(%U) = %q, %v; want refused %v", r, what, got, refused)
		}
		if unicode.In(r, unicode.Cn, unicode.Co) && !ends[r] {
			continue
		}
		c := encode(r)
		for _, at := range []struct {
			where, s string
			end      bool
		}{{"middle", "a" + c + "b", false}, {"start", c + "b", true}, {"end", "a" + c, true}} {
			want := refused || at.end && unicode.IsSpace(r)
			err := CheckText("name", at.s, MaxNameLen, false)
			if (err != nil) != want {
				fail("%U at the %s: err = %v, want refused %v", r, at.where, err, want)
				continue
			}
			if refused && utf8.ValidString(at.s) && !strings.Contains(err.Error(), fmt.Sprintf("(%U)", r)) {
				fail("%U at the %s: %v, want the error to name the code point", r, at.where, err)
			}
		}
		if r > 0x2FFF && r != 'Ａ' && r != 'ａ' {
			// A strict name is ASCII: the scripts and symbols up to
			// U+2FFF, and the fullwidth A and a, try it enough.
			continue
		}
		mid := "a" + c + "b"
		if err := CheckQueueRef(mid); (err == nil) != strictASCII(r, false) {
			fail("CheckQueueRef(%q) = %v", mid, err)
		}
		if err := CheckNewTenant(mid); (err == nil) != strictASCII(r, true) {
			fail("CheckNewTenant(%q) = %v", mid, err)
		}
	}
	if wrong > 20 {
		t.Errorf("... and %d more", wrong-20)
	}
}

// TestRefusedClasses: which characters the refused classes hold. Every
// default-ignorable code point (other default-ignorables, format
// characters and variation selectors, less white space, the interlinear
// annotation marks U+FFF9-U+FFFB, the Egyptian format controls
// U+13430-U+13440 and the prepended concatenation marks) is refused; the
// format characters that are not default-ignorable are exactly those
// three groups, refused too because every format character is; and no
// white space is among them, so leading and trailing space stays its own
// rule.
func TestRefusedClasses(t *testing.T) {
	t.Parallel()
	ignorableOrFormat := func(r rune) bool {
		return unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector)
	}
	excluded := func(r rune) bool {
		return r >= 0xFFF9 && r <= 0xFFFB || r >= 0x13430 && r <= 0x13440 || unicode.Is(unicode.Prepended_Concatenation_Mark, r)
	}
	var notIgnorable []string
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !ignorableOrFormat(r) {
			continue
		}
		if unicode.Is(unicode.White_Space, r) {
			t.Errorf("%U is white space and default-ignorable or a format character", r)
		}
		if _, refused := refusedRune(r); !refused {
			t.Errorf("%U is default-ignorable or a format character, and not refused", r)
		}
		if excluded(r) {
			if !unicode.Is(unicode.Cf, r) {
				t.Errorf("%U: excluded from the default-ignorables, and not a format character", r)
			}
			notIgnorable = append(notIgnorable, fmt.Sprintf("%U", r))
		}
	}
	t.Logf("format characters refused that are not default-ignorable: %s", strings.Join(notIgnorable, " "))
	for _, tt := range []struct {
		name string
		r    rune
		tab  *unicode.RangeTable
	}{
		{"invisible times", 0x2062, unicode.Cf},
		{"mongolian vowel separator", 0x180E, unicode.Cf},
		{"tag latin capital A", 0xE0041, unicode.Cf},
		{"arabic number sign, a prepended concatenation mark", 0x0600, unicode.Cf},
		{"combining grapheme joiner", 0x034F, unicode.Other_Default_Ignorable_Code_Point},
		{"hangul filler", 0x3164, unicode.Other_Default_Ignorable_Code_Point},
		{"variation selector 16", 0xFE0F, unicode.Variation_Selector},
		{"line separator", 0x2028, unicode.Zl},
		{"paragraph separator", 0x2029, unicode.Zp},
	} {
		if !unicode.Is(tt.tab, tt.r) {
			t.Errorf("%s %U: not in its table", tt.name, tt.r)
		}
		if _, refused := refusedRune(tt.r); !refused {
			t.Errorf("%s %U: not refused", tt.name, tt.r)
		}
	}
}

// nameChecks are the checks of every name class and key, for the fuzz
// target: the field each reports, whether it is a new name (never only
// dots) and whether it is strict (ASCII, and lowercase when new).
var nameChecks = []struct {
	name          string
	check         func(string) error
	field         string
	max           int
	isNew, strict bool
}{
	{"schedule", CheckName, "name", MaxNameLen, true, false},
	{"new queue", CheckNewQueue, "queue", MaxQueueLen, true, true},
	{"queue reference", CheckQueueRef, "queue", MaxQueueLen, false, true},
	{"new tenant", CheckNewTenant, "tenant", MaxQueueLen, true, true},
	{"tenant reference", CheckTenantRef, "tenant", MaxQueueLen, false, true},
	{"token", CheckTokenName, "name", MaxQueueLen, true, true},
	{"worker", CheckWorkerID, "worker_id", MaxNameLen, true, false},
	{"idempotency key", CheckIdempotencyKey, "idempotency_key", MaxIdempotencyKey, false, false},
}

// FuzzName: no check of a name panics; each refuses with a
// *ValidationError of its field; a name one accepts is valid UTF-8 within
// its limit, holds no refused character, has no leading or trailing
// space, is not only dots when it is a new name, and is lowercase ASCII
// when it is a new strict one. A new strict name accepted is accepted as
// a reference too, and a reference that is lowercase and not only dots
// would be accepted as new.
func FuzzName(f *testing.F) {
	for _, s := range []string{
		"nightly-report", "acme", "Acme", ".", "..", "...", ".hidden", "q.1_a-b:c", " lead", "trail ",
		"a\u2062b", "a\u180eb", "a\u034fb", "a\ufe0fb", "a\U000E0041b", "\u3164", "a\u2028b", "a\u2029b",
		"a\u202eb", "a\u00a0b", "\u00a0", "a\ue000b", "a\u0378b", "a\uffffb", "a\xed\xa0\x80b", "\xff", "sch_x", "",
		strings.Repeat("q", MaxQueueLen+1), "backup 🚀", "\u2764\ufe0f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		accepted := map[string]bool{}
		for _, c := range nameChecks {
			err := c.check(s)
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) || ve.Field != c.field {
					t.Fatalf("%s %q: %v (%T), want a *ValidationError of %s", c.name, s, err, err, c.field)
				}
				continue
			}
			accepted[c.name] = true
			if s == "" && c.field == "idempotency_key" {
				continue // no key
			}
			switch {
			case !utf8.ValidString(s):
				t.Fatalf("%s: accepted %q, not valid UTF-8", c.name, s)
			case len(s) > c.max:
				t.Fatalf("%s: accepted %d bytes, over %d", c.name, len(s), c.max)
			case strings.TrimSpace(s) != s:
				t.Fatalf("%s: accepted %q, with leading or trailing space", c.name, s)
			case c.isNew && strings.Trim(s, ".") == "":
				t.Fatalf("%s: accepted %q, only dots", c.name, s)
			}
			for _, r := range s {
				if refusedByTables(r) {
					t.Fatalf("%s: accepted %q, holding %U", c.name, s, r)
				}
				if c.strict && !strictASCII(r, c.isNew) {
					t.Fatalf("%s: accepted %q, holding %q", c.name, s, r)
				}
			}
		}
		lowerNotDots := strings.ToLower(s) == s && strings.Trim(s, ".") != ""
		for _, pair := range [][2]string{{"new queue", "queue reference"}, {"new tenant", "tenant reference"}} {
			if accepted[pair[0]] && !accepted[pair[1]] {
				t.Fatalf("%q: accepted as a %s, refused as a %s", s, pair[0], pair[1])
			}
			if accepted[pair[1]] && lowerNotDots && !accepted[pair[0]] {
				t.Fatalf("%q: accepted as a %s, lowercase, refused as a %s", s, pair[1], pair[0])
			}
		}
	})
}
