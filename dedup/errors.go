package dedup

import "errors"

var (
	// ErrOptions reports an Options field out of range; the message says which and what to use.
	ErrOptions = errors.New("dedup: invalid options")
	// ErrNotDir reports an output path that is a file: give a new or empty directory.
	ErrNotDir = errors.New("dedup: the output path is a file, not a directory")
	// ErrDirNotEmpty reports an output directory that holds files, which only a forced
	// write replaces: give a new or empty directory, or force.
	ErrDirNotEmpty = errors.New("dedup: the output directory is not empty")
)
