// Package jsonkeys lists the field names of a JSON document as dotted
// paths, for tests that pin a JSON contract (the names scripts read) in a
// golden file without pinning the values.
package jsonkeys

import (
	"encoding/json"
	"slices"
	"sort"
)

// Paths returns every object key in the JSON document raw as a dotted
// path ("a.b"), keys of objects inside arrays as "a[].b", sorted and
// without repeats.
func Paths(raw []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var out []string
	walk(v, "", &out)
	sort.Strings(out)
	return slices.Compact(out), nil
}

func walk(v any, prefix string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			*out = append(*out, p)
			walk(e, p, out)
		}
	case []any:
		for _, e := range x {
			walk(e, prefix+"[]", out)
		}
	}
}
