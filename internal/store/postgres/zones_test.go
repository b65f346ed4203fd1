package postgres

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestZoneRulesMigratedOnOpen: a schema made by the release before
// zone_rules (migrated to 0001 only) gets the table when it is opened, and
// keeps what it had.
func TestZoneRulesMigratedOnOpen(t *testing.T) {
	dsn := testDSN(t)
	ctx := t.Context()
	schema := newSchema(t, dsn)
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	// The pool of a store in schema (as Open makes it): its search_path
	// is the schema, so the migration writes nothing anywhere else.
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, applied, err := migrate(ctx, pool, schema, ms[:1], time.Now()); err != nil || !slices.Equal(applied, []int{1}) {
		pool.Close()
		t.Fatalf("migrate to 0001: %v, %v", applied, err)
	}
	pool.Close()

	s := openSchema(t, dsn, schema)
	var want []int
	for _, m := range ms[1:] {
		want = append(want, m.Version)
	}
	if !slices.Equal(s.applied, want) || !slices.Contains(want, 2) {
		t.Errorf("Open applied %v, want %v (with 0002_zone_rules)", s.applied, want)
	}
	storetest.ZoneTablesFresh(t, s)
}
