package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/sched-dev/sched/internal/store/migration"
)

// migrationFS holds the schema history. A migration is never edited once
// released: a change is a new file with the next number.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// loadMigrations reads the schema history from dir in fsys (see
// migration.Load).
func loadMigrations(fsys fs.FS, dir string) ([]migration.Migration, error) {
	return migration.Load(fsys, dir)
}

// migrate applies the migrations db has not seen yet, in order, and records
// each in schema_migrations. All pending steps run in one transaction (BEGIN
// IMMEDIATE on the writer pool), so a database is never left half-upgraded
// and two processes cannot migrate at once. It refuses a database that has
// a migration this binary does not know (written by a newer release). It
// returns the versions it applied: none on a database already up to date.
func migrate(ctx context.Context, db *sql.DB, ms []migration.Migration, now time.Time) (applied []int, err error) {
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
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("migrate: apply %s: %w", m.Name, translate(err))
		}
		if _, err := tx.ExecContext(ctx, qRecordMigration, m.Version, m.Name, now.UnixMilli()); err != nil {
			return nil, fmt.Errorf("migrate: record %s: %w", m.Name, translate(err))
		}
		applied = append(applied, m.Version)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrate: commit: %w", translate(err))
	}
	return applied, nil
}
