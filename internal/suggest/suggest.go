// Package suggest finds what a mistyped word was probably meant to be: a
// command, a flag, a day or month name, a time zone. Every "did you mean"
// in sched comes from here, so they all judge closeness the same way.
package suggest

// Distance is the Levenshtein distance of a and b, counted in bytes:
// the words compared are ASCII (names, flags, zones). Words longer than
// 64 bytes are never close to anything (the answer is then large), which
// bounds the work a hostile input can cause.
func Distance(a, b string) int {
	const longest = 64
	if len(a) > longest || len(b) > longest {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the candidate nearest to word within limit edits, the first
// in candidates' order on a tie, or "" when none is that close.
func Closest(word string, candidates []string, limit int) string {
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := Distance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
