package sqlite

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestZoneRulesMigratedOnOpen: a database made by the release before
// zone_rules (migrated to 0001 only) gets the table when it is opened, and
// keeps what it had.
func TestZoneRulesMigratedOnOpen(t *testing.T) {
	ctx := t.Context()
	ms, err := loadMigrations(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sched.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if applied, err := migrate(ctx, db, ms[:1], time.Now()); err != nil || !slices.Equal(applied, []int{1}) {
		t.Fatalf("migrate to 0001: %v, %v", applied, err)
	}
	if _, err := db.ExecContext(ctx, qInitShards, "1"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a database at 0001: %v", err)
	}
	defer s.Close()
	var want []int
	for _, m := range ms[1:] {
		want = append(want, m.Version)
	}
	if !slices.Equal(s.applied, want) || !slices.Contains(want, 2) {
		t.Errorf("Open applied %v, want %v (with 0002_zone_rules)", s.applied, want)
	}
	var shards string
	if err := s.r.QueryRowContext(ctx, qGetShards).Scan(&shards); err != nil || shards != "1" {
		t.Errorf("shards after the migration: %q, %v; want the 1 stored before", shards, err)
	}
	storetest.ZoneTablesFresh(t, s)
}
