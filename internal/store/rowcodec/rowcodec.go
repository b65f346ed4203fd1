// Package rowcodec is the half of the SQL store drivers (store/sqlite,
// store/postgres) that is the same in both: how a record's fields become
// the column values a statement binds, how the rows a statement answers
// become records, and the checks that come before a statement. A driver
// keeps only what is its own: its SQL, its placeholders and types, its
// transactions and its error translation. Written once here, the two
// drivers cannot drift apart on what a column means.
//
// Time encoding. Every instant is kept as UTC unix milliseconds and every
// duration as milliseconds (see package store for why); the zero time is
// NULL where a column may be empty, and each driver binds NULL with its own
// type.
package rowcodec

import (
	"errors"
	"fmt"
	"time"

	"github.com/sched-dev/sched/internal/record"
)

// Scanner is one row a driver read: a *sql.Row or *sql.Rows of
// database/sql, a pgx.Row or pgx.Rows of pgx.
type Scanner interface{ Scan(dest ...any) error }

// Codec holds what the shared code needs to know of a driver's errors.
type Codec struct {
	// NoRows is the error the driver's one-row reads return when the
	// statement answered no row (sql.ErrNoRows, pgx.ErrNoRows).
	NoRows error
	// Translate turns the driver's errors into the store's sentinels.
	Translate func(error) error
}

// Found sorts the error of a one-row read: nil is a row (true), NoRows is
// none (false, nil), and anything else is the translated error.
func (c Codec) Found(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, c.NoRows):
		return false, nil
	}
	return false, c.Translate(err)
}

// MS is t as stored: unix milliseconds.
func MS(t time.Time) int64 { return t.UnixMilli() }

// FromMS is the instant stored as v, in UTC.
func FromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// DurMS is d as stored: milliseconds.
func DurMS(d time.Duration) int64 { return d.Milliseconds() }

// FromDurMS is the duration stored as v.
func FromDurMS(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// Payload binds a payload or any other NOT NULL bytes column: no bytes is
// empty bytes, never NULL (both drivers bind a nil []byte as NULL).
func Payload(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}

// NullString binds an optional text column: empty is NULL.
func NullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// CheckPayload refuses a schedule whose payload is over record.MaxPayload;
// what is the schedule's write, for the message.
func CheckPayload(what string, sc *record.Schedule) error {
	if len(sc.Payload) > record.MaxPayload {
		return fmt.Errorf("%s schedule %s: payload of %d bytes is over %d", what, sc.ScheduleID, len(sc.Payload), record.MaxPayload)
	}
	return nil
}
