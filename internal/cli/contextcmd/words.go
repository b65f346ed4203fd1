package contextcmd

import (
	"errors"
	"strings"
	"unicode"
)

// splitWords splits a command line into its words as a POSIX shell would,
// without expanding anything: words are separated by blanks; '...' keeps
// everything inside as it is; "..." keeps everything but a backslash
// before ", \, $ or `; outside quotes a backslash keeps the next
// character. --token-command takes one string, split by this, so that
// 'secret-tool lookup service "sched prod"' is three words and a quoted
// one.
func splitWords(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		rs      = []rune(s)
		i       int
		unclose = func(q string) error { return errors.New("unterminated " + q + " quote") }
	)
	for i < len(rs) {
		r := rs[i]
		switch {
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, unclose("'")
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j + 1
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, unclose(`"`)
			}
			i = j + 1
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("a backslash ends the line")
			}
			inWord = true
			cur.WriteRune(rs[i+1])
			i += 2
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		default:
			inWord = true
			cur.WriteRune(r)
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
