package importcmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
)

// checkpoint is the state file of an import: how far into the input every
// item is confirmed (created, or found created before), and a hash of
// that prefix, so that a re-run skips exactly the same input and never
// another file's.
type checkpoint struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// Done is the last position confirmed: a line of an NDJSON file, a
	// schedule of a YAML file; every position up to it is done.
	Done   int    `json:"done"`
	SHA256 string `json:"sha256"` // of the units up to Done (prefix)
}

// prefix hashes the units of the input in order, as the checkpoint
// records them.
type prefix struct{ h hash.Hash }

func newPrefix() *prefix { return &prefix{h: sha256.New()} }

func (p *prefix) add(u unit) {
	p.h.Write(u.raw)
	p.h.Write([]byte{'\n'})
}

func (p *prefix) sum() string { return hex.EncodeToString(p.h.Sum(nil)) }

// readCheckpoint reads the state file; a file that does not exist is no
// checkpoint (nil).
func readCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state file: %w", err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("state file %s is not an import's state (%v); remove it or run with --restart", path, err)
	}
	return &c, nil
}

// write replaces the state file with c, atomically (a new file renamed
// over the old), so that an import killed while writing leaves the last
// checkpoint whole.
func (c *checkpoint) write(path string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write state file: %w", err)
	}
	return nil
}
