package timetable

import (
	"fmt"
	"testing"
)

// TestCronCache: an expression compiled once is shared, compiles as it
// would afresh, and an expression refused is refused each time; the cache
// never holds more than its bound.
func TestCronCache(t *testing.T) {
	a, err := parseCron("*/7 3 * * 1-5")
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseCron("*/7 3 * * 1-5")
	if err != nil || a != b {
		t.Fatalf("the same text: %p then %p (%v); want one compiled expression", a, b, err)
	}
	fresh, err := compileCron("*/7 3 * * 1-5")
	if err != nil || *fresh != *a {
		t.Fatalf("compiled afresh: %+v (%v), cached %+v", fresh, err, a)
	}
	for range 2 {
		if _, err := parseCron("0 0 31 2 *"); err == nil {
			t.Fatal("an expression that never fires: want its error, each time")
		}
	}
	for i := range maxCachedCrons + 10 {
		if _, err := parseCron(fmt.Sprintf("%d %d * * *", i%60, i/60%24)); err != nil {
			t.Fatal(err)
		}
	}
	cronCache.mu.RLock()
	n := len(cronCache.m)
	cronCache.mu.RUnlock()
	if n > maxCachedCrons {
		t.Errorf("%d expressions cached, over the bound of %d", n, maxCachedCrons)
	}
}
