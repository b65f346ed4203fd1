package storetest

import (
	"strings"
	"testing"
)

// PlanHasInOrder checks that a query plan's text holds every want, in
// that order, and reports the first it lacks: the drivers' plan tests pin
// the indexes their statements walk this way.
func PlanHasInOrder(t *testing.T, name, plan string, want []string) {
	t.Helper()
	rest := plan
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s: plan lacks %q (in order):\n%s", name, w, plan)
			return
		}
		rest = rest[i+len(w):]
	}
}
