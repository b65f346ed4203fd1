package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"list", "list", 0},
		{"lsit", "list", 2},
		{"staet", "state", 2},
		{"Europe/Berln", "Europe/Berlin", 1},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
	long := string(make([]byte, 1000))
	if d := Distance(long, "x"); d < 64 {
		t.Errorf("a 1000-byte word is %d edits from x: long words must never be close", d)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"limit", "list", "state"}
	for _, tc := range []struct {
		word  string
		limit int
		want  string
	}{
		{"lsit", 1, ""},
		{"lsit", 2, "limit"}, // two edits from limit and from list: the first wins
		{"lim", 2, "limit"},
		{"staet", 2, "state"},
		{"staet", 1, ""},
		{"zzzzzz", 2, ""},
		{"limt", 2, "limit"},
	} {
		if got := Closest(tc.word, names, tc.limit); got != tc.want {
			t.Errorf("Closest(%q, %d) = %q, want %q", tc.word, tc.limit, got, tc.want)
		}
	}
}
