package engine

import (
	"reflect"
	"testing"
	"time"
)

// TestPartsStandAlone checks the engine's shape: New fills every exported
// part, and no part (exported or not) holds a pointer back to the Engine,
// so each can be read, built and tested from what it holds.
func TestPartsStandAlone(t *testing.T) {
	h := newHarness(t, utc("2026-03-01T09:00:00Z"), nil)
	if h.e.Control == nil || h.e.Queue == nil || h.e.Cluster == nil || h.e.Stats == nil {
		t.Fatalf("New left a part unset: %+v", h.e)
	}
	engineT := reflect.TypeFor[Engine]()
	for _, pt := range []reflect.Type{
		reflect.TypeFor[Control](), reflect.TypeFor[Queue](), reflect.TypeFor[Cluster](), reflect.TypeFor[Stats](),
		reflect.TypeFor[planner](), reflect.TypeFor[member](), reflect.TypeFor[sweeper](), reflect.TypeFor[observer](),
		reflect.TypeFor[notifier](),
	} {
		for i := range pt.NumField() {
			f := pt.Field(i)
			if refersTo(f.Type, engineT) {
				t.Errorf("%s.%s (%s) refers to the Engine", pt.Name(), f.Name, f.Type)
			}
		}
	}
	if got := h.e.Cluster.Now(); !got.Equal(h.clk.Now().UTC()) || got.Location() != time.UTC {
		t.Errorf("Cluster.Now = %v, want the engine's clock %v in UTC", got, h.clk.Now())
	}
}

// refersTo reports whether t is target or a pointer, slice, array, map or
// channel of it.
func refersTo(t, target reflect.Type) bool {
	for {
		if t == target {
			return true
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
			t = t.Elem()
		case reflect.Map:
			return refersTo(t.Key(), target) || refersTo(t.Elem(), target)
		default:
			return false
		}
	}
}
