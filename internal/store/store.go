// Package store is the contract between the engine and a database: the
// Store interface (the reads, the few batched hot paths, node registration
// and the figures), Tx (a write transaction of small statements that the
// engine composes into its rules), and the sentinel errors every driver
// translates its native errors into. It decides nothing and imports no
// database driver; the drivers live in store/sqlite and store/postgres, and
// one conformance suite (store/storetest) holds both to the contract. The
// records themselves are in internal/record.
//
// Time encoding. Drivers keep every instant to the millisecond, in UTC
// (SQLite: INTEGER unix milliseconds), and every duration to the
// millisecond. Milliseconds, not seconds, because the queue's times need
// sub-second precision (a 2 s test lease, heartbeats at a third of it,
// delivery-lag histograms with sub-second buckets); integers, not text,
// because they compare and index as numbers with no format or zone to parse,
// map one to one onto PostgreSQL's BIGINT, and cover year 9999 with room to
// spare. ScheduledFor is the exception that proves the rule: it is always a
// whole second, because the occurrence id hashes it as unix seconds.
package store

import (
	"errors"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// Sentinel errors. Every driver translates its native errors into these in
// one function, so the engine and the API never look at a driver's error
// types. Test with errors.Is; the driver's message stays in the chain.
var (
	// ErrNotFound: no such record for this tenant. A record of another
	// tenant is not found either, so ids cannot be probed across tenants.
	// A write that references a missing parent (an occurrence of a schedule
	// that does not exist for its tenant) is ErrNotFound too.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a uniqueness rule refused the write (a schedule id or a
	// tenant's idempotency key already taken), or a conditional write found
	// the record changed since it was read.
	ErrConflict = errors.New("store: conflict")
	// ErrStaleAttempt: an ack, nack or heartbeat presented an attempt number
	// (fencing token) that is no longer the occurrence's current one.
	ErrStaleAttempt = errors.New("store: stale attempt")
	// ErrBusy: the store is locked or busy (SQLite: SQLITE_BUSY after
	// busy_timeout). Nothing was written; the operation can be retried.
	ErrBusy = errors.New("store: busy")
	// ErrStoreFull: the store is out of space. Nothing was written; the
	// daemon stays up and answers store_full until space is freed.
	ErrStoreFull = errors.New("store: full")
	// ErrUnavailable: the database could not be reached, or the connection
	// to it was lost during the operation (PostgreSQL refusing or dropping
	// connections, shutting down, restarting). A read can be retried; a
	// write whose commit was under way when the connection went may or may
	// not have been applied, as with any lost answer.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrCorrupt: the store's integrity check failed. The store refuses to
	// serve and never repairs silently.
	ErrCorrupt = errors.New("store: corrupt")
)

// ListOccurrencesParams selects a tenant's occurrences, ordered by
// (scheduled_for, occurrence_id), oldest first, or newest first with
// Reverse. Every filter is optional except TenantID.
//
// Paging is by keyset: After is the key of the last occurrence of the
// previous page, and only occurrences strictly after it in the list's
// order come back. A row added while a client pages appears at most once,
// and every row that existed when paging began appears exactly once.
type ListOccurrencesParams struct {
	TenantID   string
	ScheduleID string                 // empty: every schedule of the tenant
	State      record.OccurrenceState // empty: any state
	Queue      string                 // empty: any queue
	Limit      int                    // 0 means DefaultListLimit; at most MaxListLimit
	Reverse    bool                   // newest first
	After      *OccurrenceKey         // nil: from the start
}

// ListAttemptsParams selects a page of the attempts of a tenant's
// occurrence, by attempt number: those numbered above After (0: from the
// first), at most Limit of them (ListLimit). A page reads as many attempts
// as it returns, however many replays the occurrence has been through.
// Another tenant's occurrence, or none, is ErrNotFound, even past its last
// attempt.
type ListAttemptsParams struct {
	TenantID     string
	OccurrenceID string
	After        int64
	Limit        int
}

// OccurrenceKey is an occurrence's position in a listing.
type OccurrenceKey struct {
	ScheduledFor time.Time
	OccurrenceID string
}

// Limits on list operations.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)
