// Package migration loads a store driver's schema history (numbered SQL
// files, embedded in the driver) and applies it (Apply) in a transaction
// the driver begins and commits.
package migration

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Migration is one numbered schema step.
type Migration struct {
	Version int    // from the file name: 0001_init.sql is 1
	Name    string // the file name
	SQL     string
}

// Load reads NNNN_name.sql files from dir in fsys. Versions must run 1, 2,
// 3, ... without gaps or duplicates, so that lexical order, numeric order
// and apply order are the same.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(name, "_")
		if e.IsDir() || !ok || len(num) != 4 || !strings.HasSuffix(rest, ".sql") || len(rest) == len(".sql") {
			return nil, fmt.Errorf("migration %q: name is not NNNN_name.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %q: bad number", name)
		}
		if want := len(ms) + 1; v != want {
			return nil, fmt.Errorf("migration %q: number %d, want %d (no gaps or duplicates)", name, v, want)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	return ms, nil
}

// Tx is a driver's migration transaction, as Apply uses it. Its errors
// come back translated into the store's sentinels.
type Tx interface {
	// Exec runs a statement that answers no rows.
	Exec(ctx context.Context, sql string, args ...any) error
	// QueryInt runs a statement that answers one integer.
	QueryInt(ctx context.Context, sql string) (int, error)
}

// Statements are a driver's SQL for its schema_migrations table.
type Statements struct {
	Create string // creates the table if missing
	Max    string // answers the highest version applied, 0 for none
	Record string // records (version, name, applied_at in unix ms)
}

// Apply applies, in tx, the migrations of ms the database has not seen
// yet, in order, and records each in schema_migrations; it returns the
// versions it applied: none on a database already up to date. It refuses
// a database that has a migration ms does not hold (written by a newer
// release). what names the database in its messages. The caller begins tx
// and commits it: all pending steps apply together or not at all.
func Apply(ctx context.Context, tx Tx, q Statements, ms []Migration, now time.Time, what string) ([]int, error) {
	if err := tx.Exec(ctx, q.Create); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	have, err := tx.QueryInt(ctx, q.Max)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	if have > len(ms) {
		return nil, fmt.Errorf("%s is at schema version %d, this binary knows only %d: it was written by a newer release", what, have, len(ms))
	}
	var applied []int
	for _, m := range ms[have:] {
		if err := tx.Exec(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("apply %s: %w", m.Name, err)
		}
		if err := tx.Exec(ctx, q.Record, m.Version, m.Name, now.UnixMilli()); err != nil {
			return nil, fmt.Errorf("record %s: %w", m.Name, err)
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}
