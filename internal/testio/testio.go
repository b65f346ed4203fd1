// Package testio holds I/O helpers shared by tests across packages.
package testio

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a process or goroutine writes to while
// a test reads it: every method takes a lock.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
