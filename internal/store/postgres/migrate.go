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
// and records each in schema_migrations. It returns the schema migrated
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
// under the same lock. A schema written by a newer release (a migration
// this binary does not know) is refused.
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
	if _, err := tx.Exec(ctx, qCreateMigrations); err != nil {
		return "", nil, fmt.Errorf("migrate: create schema_migrations: %w", translate(err))
	}
	var have int
	if err := tx.QueryRow(ctx, qMaxMigration).Scan(&have); err != nil {
		return "", nil, fmt.Errorf("migrate: read schema_migrations: %w", translate(err))
	}
	if have > len(ms) {
		return "", nil, fmt.Errorf("migrate: schema %s is at version %d, this binary knows only %d: it was written by a newer release", schema, have, len(ms))
	}
	for _, m := range ms[have:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return "", nil, fmt.Errorf("migrate: apply %s: %w", m.Name, translate(err))
		}
		if _, err := tx.Exec(ctx, qRecordMigration, m.Version, m.Name, now.UnixMilli()); err != nil {
			return "", nil, fmt.Errorf("migrate: record %s: %w", m.Name, translate(err))
		}
		applied = append(applied, m.Version)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", nil, fmt.Errorf("migrate: commit: %w", translate(err))
	}
	return schema, applied, nil
}
