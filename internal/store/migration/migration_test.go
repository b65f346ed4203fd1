package migration

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrationsRejectsBadSets(t *testing.T) {
	file := &fstest.MapFile{Data: []byte("SELECT 1;")}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":        {"m/0001_a.sql": file, "m/0003_c.sql": file},
		"duplicate":  {"m/0001_a.sql": file, "m/0001_b.sql": file},
		"not first":  {"m/0002_b.sql": file},
		"bad name":   {"m/0001_a.sql": file, "m/2_b.sql": file},
		"no name":    {"m/0001_.sql": file},
		"not sql":    {"m/0001_a.txt": file},
		"empty":      {"m/.keep": file},
		"zero":       {"m/0000_a.sql": file},
		"not number": {"m/00x1_a.sql": file},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	ms, err := Load(fstest.MapFS{"m/0002_b.sql": file, "m/0001_a.sql": file, "m/0010_j.sql": file,
		"m/0003_c.sql": file, "m/0004_d.sql": file, "m/0005_e.sql": file, "m/0006_f.sql": file,
		"m/0007_g.sql": file, "m/0008_h.sql": file, "m/0009_i.sql": file}, "m")
	if err != nil || len(ms) != 10 || ms[9].Name != "0010_j.sql" {
		t.Errorf("ten in order: %v, %v", ms, err)
	}
}
