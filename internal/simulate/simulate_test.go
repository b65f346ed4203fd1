package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/sched-dev/sched/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// simulate runs r with the default limits and returns its JSON answer.
func simulate(t *testing.T, r *api.SimulateRequest) []byte {
	t.Helper()
	res, err := Simulate(context.Background(), r, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n got:\n%s", name, got)
	}
}

// decode reads a JSON answer back.
func decode(t *testing.T, b []byte) *api.SimulateResult {
	t.Helper()
	var res api.SimulateResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return &res
}
