package contextcmd

import (
	"slices"
	"testing"
)

// TestSplitWords: --token-command's words, split as a shell splits them
// and nothing expanded.
func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{"secret-tool lookup service sched", []string{"secret-tool", "lookup", "service", "sched"}, ""},
		{"  pass   show\tsched/prod  ", []string{"pass", "show", "sched/prod"}, ""},
		{`secret-tool lookup service "sched prod"`, []string{"secret-tool", "lookup", "service", "sched prod"}, ""},
		{`sh -c 'echo "$TOKEN"'`, []string{"sh", "-c", `echo "$TOKEN"`}, ""},
		{`a "b \"c\" \$d \e" f\ g ''`, []string{"a", `b "c" $d \e`, "f g", ""}, ""},
		{`x"y"'z'`, []string{"xyz"}, ""},
		{"", nil, ""},
		{`a 'b`, nil, "unterminated ' quote"},
		{`a "b`, nil, `unterminated " quote`},
		{`a \`, nil, "a backslash ends the line"},
	}
	for _, tc := range cases {
		got, err := splitWords(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %q %v, want the error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}
