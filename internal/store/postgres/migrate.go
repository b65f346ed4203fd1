package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

// migrate applies the migrations the schema has not seen yet, in order,
// and records each in schema_migrations (migration.Apply). It returns the schema migrated
// (schema, or the connection's current schema when schema is empty) and
// the versions it applied: none on a schema already up to date.
//
// Everything runs in one transaction that first takes a transaction-scoped
// advisory lock keyed by the schema's name (pg_advisory_xact_lock), so that
// several nodes starting at once migrate one after the other: the first
// applies the steps, the others wait for its commit and then find nothing
// to do. DDL is transactional in PostgreSQL, so a failed step leaves no
// half-built schema, and the lock goes with the transaction even if the
// process dies. With schema set, the schema itself is created (if missing)
// under the same lock.
//
// The migration files and the DDL here run with no parameters, which pgx
// sends on the simple protocol (the only one that takes several statements
// at once); they are constants of this binary, with no value from outside
// in them. Everything else the store runs is on the extended protocol.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration.Migration, now time.Time) (_ string, applied []int, err error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return "", nil, fmt.Errorf("migrate: begin: %w", translate(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()

	create := schema != ""
	if !create {
		var cur *string
		if err := tx.QueryRow(ctx, qCurrentSchema).Scan(&cur); err != nil {
			return "", nil, fmt.Errorf("migrate: current schema: %w", translate(err))
		}
		if cur == nil {
			return "", nil, errors.New("migrate: no schema: the connection's search_path names no existing schema (use WithSchema)")
		}
		schema = *cur
	}
	if _, err := tx.Exec(ctx, qMigrationLock, schema); err != nil {
		return "", nil, fmt.Errorf("migrate: lock: %w", translate(err))
	}
	if create {
		if _, err := tx.Exec(ctx, qCreateSchemaPrefix+pgx.Identifier{schema}.Sanitize()); err != nil {
			return "", nil, fmt.Errorf("migrate: create schema %s: %w", schema, translate(err))
		}
	}
	applied, err = migration.Apply(ctx, migrationTx{tx}, migrationStatements, ms, now, "schema "+schema)
	if err != nil {
		return "", nil, fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", nil, fmt.Errorf("migrate: commit: %w", translate(err))
	}
	return schema, applied, nil
}

var migrationStatements = migration.Statements{Create: qCreateMigrations, Max: qMaxMigration, Record: qRecordMigration}

// migrationTx is the transaction a migration runs in (migration.Tx).
type migrationTx struct{ tx pgx.Tx }

func (m migrationTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := m.tx.Exec(ctx, q, args...)
	return translate(err)
}

func (m migrationTx) QueryInt(ctx context.Context, q string) (int, error) {
	var n int
	err := m.tx.QueryRow(ctx, q).Scan(&n)
	return n, translate(err)
}
