// Package migration loads a store driver's schema history: numbered SQL
// files, embedded in the driver. Each driver applies them in its own way.
package migration

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
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
