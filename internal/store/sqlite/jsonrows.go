package sqlite

import "strconv"

// jsonRows builds a JSON array of arrays: the rows a batch statement reads
// with json_each (queries.go). One bound text instead of a parameter per
// value, and one statement per batch instead of one per row.
type jsonRows struct {
	b     []byte
	rows  int
	first bool // the next value is the first of its row
}

// row starts a row; values follow.
func (j *jsonRows) row() {
	if j.rows == 0 {
		j.b = append(j.b[:0], '[')
	} else {
		j.b = append(j.b, "],"...)
	}
	j.b = append(j.b, '[')
	j.rows++
	j.first = true
}

func (j *jsonRows) sep() {
	if !j.first {
		j.b = append(j.b, ',')
	}
	j.first = false
}

// str appends a JSON string. Bytes that are not valid UTF-8 pass through as
// they are: SQLite's JSON functions hand them back unchanged, so a value
// comes back byte for byte, as it would from a bound parameter.
func (j *jsonRows) str(s string) {
	j.sep()
	j.b = append(j.b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			j.b = append(j.b, '\\', c)
		case c < 0x20:
			j.b = append(j.b, `\u00`...)
			j.b = append(j.b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			j.b = append(j.b, c)
		}
	}
	j.b = append(j.b, '"')
}

func (j *jsonRows) int(v int64) {
	j.sep()
	j.b = strconv.AppendInt(j.b, v, 10)
}

func (j *jsonRows) null() {
	j.sep()
	j.b = append(j.b, "null"...)
}

// String closes the array and returns it; it is "[]" when there are no
// rows.
func (j *jsonRows) String() string {
	if j.rows == 0 {
		return "[]"
	}
	return string(j.b) + "]]"
}

func (j *jsonRows) reset() { j.b, j.rows = j.b[:0], 0 }

// jsonInts appends vs to dst as a flat JSON array of integers, which a
// statement reads with json_each's value: cheaper than an array of rows
// when each row is one integer.
func jsonInts(dst []byte, vs []int64) []byte {
	dst = append(dst, '[')
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, v, 10)
	}
	return append(dst, ']')
}

// groupInOrder groups the items items by key: each group's items in their
// order, and the keys in the order first seen. Batch statements run once
// per group of items that share every value but their row's id.
func groupInOrder[K comparable](items []int, key func(i int) K) (keys []K, groups map[K][]int) {
	groups = make(map[K][]int)
	for _, i := range items {
		k := key(i)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	return keys, groups
}
