// Package atomicfile writes a file so that a reader sees either the old contents or the
// whole new ones, never a part: the batch output of dedup and the files the CLI writes
// beside it go through it, so that a killed run leaves no half-written list or corpus.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes path through fn: into a temporary file in the same directory (so the
// rename stays on one file system), synced, given mode 0644 as os.Create would, and
// renamed over path. On any error the temporary file is removed and path is left as it
// was; the error names path.
func Write(path string, fn func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = fn(f)
	if err == nil {
		err = f.Chmod(0o644) // as os.Create would have made it, not CreateTemp's 0600
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
