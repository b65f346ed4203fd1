package api

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestErrorsDocumented: docs/api.md's table of errors lists exactly the
// answers in Errors, status and code, each once; and every Code constant
// is in Errors. Scripts match on these codes, so the docs must not lag.
func TestErrorsDocumented(t *testing.T) {
	f, err := os.Open("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| (\\d{3}) \\| `([a-z_]+)` \\|")
	var documented []ErrorKind
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case line == "## Errors":
			in = true
		case in && len(line) > 3 && line[:3] == "## ":
			in = false
		case in:
			if m := row.FindStringSubmatch(line); m != nil {
				status, _ := strconv.Atoi(m[1])
				documented = append(documented, ErrorKind{status, m[2]})
			}
		}
	}
	if len(documented) == 0 {
		t.Fatal("docs/api.md: no table of errors under \"## Errors\"")
	}
	for _, k := range documented {
		if !slices.Contains(Errors, k) {
			t.Errorf("docs/api.md documents %d %s, which the daemon never answers (not in api.Errors)", k.Status, k.Code)
		}
	}
	for _, k := range Errors {
		if n := count(documented, k); n != 1 {
			t.Errorf("docs/api.md's table of errors has %d %s %d times, want once", k.Status, k.Code, n)
		}
	}
	for _, c := range codeConstants(t) {
		if !slices.ContainsFunc(Errors, func(k ErrorKind) bool { return k.Code == c }) {
			t.Errorf("code %q is not in api.Errors", c)
		}
	}
}

func count(ks []ErrorKind, k ErrorKind) int {
	n := 0
	for _, x := range ks {
		if x == k {
			n++
		}
	}
	return n
}

// codeConstants reads the values of the Code… constants from api.go.
func codeConstants(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("api.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\s+Code[A-Za-z]+\s+= "([a-z_]+)"`).FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	if len(out) < 10 {
		t.Fatalf("api.go: found %d Code constants; the pattern no longer matches", len(out))
	}
	return out
}
