package engine

import (
	"testing"
)

// onFreshStack runs its function to the end before returning, and a panic
// in it reaches the caller (so the server's recovery still answers 500
// rather than the process dying on another goroutine's panic).
func TestOnFreshStack(t *testing.T) {
	t.Parallel()
	ran := false
	onFreshStack(func() { ran = true })
	if !ran {
		t.Fatal("f did not run before onFreshStack returned")
	}
	got := func() (p any) {
		defer func() { p = recover() }()
		onFreshStack(func() { panic("boom") })
		return nil
	}()
	if got != "boom" {
		t.Fatalf("recovered %v, want the panic of f", got)
	}
}
