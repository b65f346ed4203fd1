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
// each in schema_migrations (migration.Apply). All pending steps run in one
// transaction (BEGIN IMMEDIATE on the writer pool), so a database is never
// left half-upgraded and two processes cannot migrate at once. It returns
// the versions it applied: none on a database already up to date.
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
	applied, err = migration.Apply(ctx, migrationTx{tx}, migrationStatements, ms, now, "the database")
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrate: commit: %w", translate(err))
	}
	return applied, nil
}

var migrationStatements = migration.Statements{Create: qCreateMigrations, Max: qMaxMigration, Record: qRecordMigration}

// migrationTx is the transaction a migration runs in (migration.Tx).
type migrationTx struct{ tx *sql.Tx }

func (m migrationTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := m.tx.ExecContext(ctx, q, args...)
	return translate(err)
}

func (m migrationTx) QueryInt(ctx context.Context, q string) (int, error) {
	var n int
	err := m.tx.QueryRowContext(ctx, q).Scan(&n)
	return n, translate(err)
}
