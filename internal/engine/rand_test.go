package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/timetable"
)

// TestConfigRand: with Config.Rand the ids an engine mints come from it
// (the what-if simulator relies on it for answers that repeat byte for
// byte): two engines given the same seeded stream mint the same schedule
// ids and trigger keys; without it, crypto/rand makes them differ.
func TestConfigRand(t *testing.T) {
	start := time.Date(2027, 1, 4, 10, 0, 0, 0, time.UTC)
	mint := func(seeded bool) (string, string) {
		h := newHarness(t, start, func(c *Config) {
			if seeded {
				c.Rand = rand.NewChaCha8([32]byte{7})
			}
		})
		sc := h.create(schedule.Settings{Name: "a", Queue: "q", Kind: timetable.KindEvery, Expr: "1m"})
		o, _, err := h.e.Control.Trigger(h.ctx, tenant, sc.ScheduleID, "")
		if err != nil {
			t.Fatal(err)
		}
		return sc.ScheduleID, o.TriggerKey
	}
	id1, key1 := mint(true)
	id2, key2 := mint(true)
	if id1 != id2 || key1 != key2 {
		t.Errorf("the same seed minted %s/%s and %s/%s", id1, key1, id2, key2)
	}
	id3, key3 := mint(false)
	id4, key4 := mint(false)
	if id3 == id4 || key3 == key4 {
		t.Errorf("crypto/rand minted the same ids twice: %s/%s", id3, key3)
	}
}
