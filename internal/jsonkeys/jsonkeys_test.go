package jsonkeys

import (
	"slices"
	"testing"
)

func TestPaths(t *testing.T) {
	got, err := Paths([]byte(`{"b":1,"a":{"x":null,"y":[{"z":1},{"z":2,"w":3}]},"c":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "a.x", "a.y", "a.y[].w", "a.y[].z", "b", "c"}
	if !slices.Equal(got, want) {
		t.Fatalf("Paths = %v, want %v", got, want)
	}
	if _, err := Paths([]byte(`{`)); err == nil {
		t.Fatal("no error for a broken document")
	}
}
