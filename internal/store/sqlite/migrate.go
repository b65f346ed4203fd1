package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// migrationFS holds the schema history. A migration is never edited once
// released: a change is a new file with the next number.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema step.
type migration struct {
	version int    // from the file name: 0001_init.sql is 1
	name    string // the file name
	sql     string
}

// loadMigrations reads NNNN_name.sql files from dir in fsys. Versions must
// run 1, 2, 3, ... without gaps or duplicates, so that lexical order, numeric
// order and apply order are the same.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
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
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	return ms, nil
}

// migrate applies the migrations db has not seen yet, in order, and records
// each in schema_migrations. All pending steps run in one transaction (BEGIN
// IMMEDIATE on the writer pool), so a database is never left half-upgraded
// and two processes cannot migrate at once. It refuses a database that has
// a migration this binary does not know (written by a newer release). It
// returns the versions it applied: none on a database already up to date.
func migrate(ctx context.Context, db *sql.DB, ms []migration, now time.Time) (applied []int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("migrate: begin: %w", translate(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()

	if _, err := tx.ExecContext(ctx, qCreateMigrations); err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", translate(err))
	}
	var have int
	if err := tx.QueryRowContext(ctx, qMaxMigration).Scan(&have); err != nil {
		return nil, fmt.Errorf("migrate: read schema_migrations: %w", translate(err))
	}
	if have > len(ms) {
		return nil, fmt.Errorf("migrate: database is at schema version %d, this binary knows only %d: it was written by a newer release", have, len(ms))
	}
	for _, m := range ms[have:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return nil, fmt.Errorf("migrate: apply %s: %w", m.name, translate(err))
		}
		if _, err := tx.ExecContext(ctx, qRecordMigration, m.version, m.name, now.UnixMilli()); err != nil {
			return nil, fmt.Errorf("migrate: record %s: %w", m.name, translate(err))
		}
		applied = append(applied, m.version)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrate: commit: %w", translate(err))
	}
	return applied, nil
}
